package io.turnstream.cli;

import io.turnstream.demo.Demo;
import io.turnstream.gateway.ProviderEndpoints;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.security.ApiKeys;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UiPayloadType;
import io.turnstream.runtime.Failures;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.config.Configurator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code turnstream demo}: the whole pipeline in one process, a scripted turn with tool use, and the web view. */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"Runs everything in this process: an embedded Kafka broker (KRaft), the topics, the",
            "upsert topology, the tool executor on a sample workspace, and the gateway with its web view.",
            "Starts a scripted turn that uses tools and prints llm.upserts as it arrives. Then keeps",
            "running (Ctrl-C stops it) unless --exit is given. Uses the simulated provider unless",
            "ANTHROPIC_API_KEY or OPENAI_API_KEY is set."})
public final class DemoCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Option(names = "--exit", description = "Exit after the scripted turn completes (exit code 0 when it completed).")
    private boolean exit;

    @Option(names = "--port", paramLabel = "P", defaultValue = "8080",
            description = "HTTP port of the gateway and web view (default: ${DEFAULT-VALUE}; 0 picks a free one).")
    private int port;

    @Option(names = "--provider", description = "Provider of the turns: anthropic, openai, openai-chat or simulated "
            + "(default: anthropic or openai when its key is set, else simulated).")
    private String provider;

    @Option(names = "--model", description = "Model for a real provider (default: claude-sonnet-4-5 for anthropic, "
            + "gpt-5-mini for openai).")
    private String model;

    @Option(names = "--prompt", description = "The scripted turn's prompt (default: \"" + Demo.SCRIPTED_PROMPT + "\").")
    private String prompt = Demo.SCRIPTED_PROMPT;

    @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "180",
            description = "How long the scripted turn may take (default: ${DEFAULT-VALUE}).")
    private long timeoutSeconds;

    @Option(names = "--secure", description = "Kafka with SASL/SCRAM-SHA-256 and ACLs, each service as its own "
            + "least-privilege principal (as turnstream broker --secure).")
    private boolean secure;

    @Option(names = "--verbose", description = "Show the services' INFO log lines (on stderr).")
    private boolean verbose;

    @Override
    public Integer call() throws InterruptedException {
        if (!verbose) {
            // the demo's own output tells what happens; services' notes and Kafka's start-up advice would bury it
            Configurator.setLevel("io.turnstream", Level.WARN);
            Configurator.setLevel("org.apache.kafka", Level.ERROR);
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println("Turnstream demo: gateway -> llm.raw-events -> topology -> llm.upserts -> tool executor -> back");
        out.flush();
        Demo demo;
        try {
            demo = Demo.start(new Demo.Options(port, ProviderEndpoints.fromEnvironment(System.getenv()), provider, model, secure),
                    out);
        } catch (IllegalStateException e) {
            throw new CliFailure(ExitCodes.FAILURE, "cannot start the demo: " + Failures.describe(e)
                    + (port != 0 ? " (is port " + port + " free? --port 0 picks a free one)" : ""), e);
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            out.println("stopping the demo ...");
            out.flush();
            demo.close();
            out.println("stopped");
            out.flush();
            stopped.countDown();
        }, "turnstream-demo-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);

        boolean completed = runScriptedTurn(demo, out);
        if (exit) {
            Runtime.getRuntime().removeShutdownHook(hook);
            demo.close();
            return completed ? ExitCodes.OK : ExitCodes.FAILURE;
        }
        printHowToGoOn(demo.gatewayUrl(), demo.managementUrl(), demo.requiresApiKey(), out);
        stopped.await();
        return ExitCodes.OK;
    }

    /** @return whether the turn completed (rather than failed or timed out) */
    private boolean runScriptedTurn(Demo demo, PrintWriter out) throws InterruptedException {
        TurnStatus turn;
        try {
            turn = demo.startTurn(prompt);
        } catch (ApiError e) {
            out.println("cannot start the scripted turn: " + e.getMessage());
            out.flush();
            return false;
        }
        synchronized (out) {
            out.println();
            out.println("* scripted turn " + turn.turnId() + ": \"" + prompt + "\"");
            out.println("  llm.upserts as it arrives (seq, item type, change type, version; for text: +chars added = total):");
            out.flush();
        }
        UITurnEvent end;
        try {
            end = demo.finished(turn.turnId()).get(timeoutSeconds, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            out.println("the scripted turn did not finish within " + timeoutSeconds + " s");
            out.flush();
            return false;
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
        boolean completed = end.type() == UiPayloadType.TURN_COMPLETED && end.status() == ResponseStatus.COMPLETE;
        synchronized (out) {
            out.println();
            String answer = demo.finalAnswer(turn.turnId());
            if (answer != null) {
                out.println("Final answer:");
                answer.lines().forEach(line -> out.println("  " + line));
            }
            out.println(completed ? "The turn completed." : "The turn ended with " + end.type()
                    + (end.error() != null ? ": " + end.error().code() + " " + end.error().message() : ""));
            out.flush();
        }
        return completed;
    }

    static void printHowToGoOn(String url, String managementUrl, boolean keyed, PrintWriter out) {
        // the key itself is never printed: the user sets TURNSTREAM_KEY to one of theirs
        String auth = keyed ? " -H \"authorization: Bearer $TURNSTREAM_KEY\"" : "";
        synchronized (out) {
            out.println();
            out.println("The demo keeps running; Ctrl-C stops it.");
            out.println("  Web view:          " + url + "/");
            if (keyed) {
                out.println("  API keys are on:   export TURNSTREAM_KEY=<one of the keys in " + ApiKeys.ENV
                        + " or the keys file> for the commands below");
            }
            out.println("  Start a turn:      curl -s " + url + "/v1/turns" + auth + " -H 'content-type: application/json' \\");
            out.println("                       -d '{\"prompt\": \"What does notes/next-launch.md say?\"}'");
            out.println("  Its upserts (SSE): curl -N" + auth + " " + url + "/v1/turns/TURN_ID/events");
            out.println("  Its snapshot:      curl -s" + auth + " " + url + "/v1/turns/TURN_ID");
            out.println("  Metrics:           curl -s " + managementUrl + "/metrics/prometheus");
            out.println("Upserts of every turn are printed below as they arrive.");
            out.println();
            out.flush();
        }
    }
}
