package io.turnstream.gateway.loop;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import io.turnstream.gateway.loop.GatewayMetrics.Counter;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.provider.ModelCaller;
import io.turnstream.gateway.provider.ResolvedProvider;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.provider.ToolCallRequest;
import io.turnstream.gateway.provider.ToolDefinition;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.runtime.TraceContext;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Runs one turn: the shell around its {@link LoopMachine}, which decides everything (steps, retries,
 * compaction, tool rounds, the end). This class performs the machine's outputs: it publishes to Kafka,
 * makes the model calls over HTTP (feeding the machine their stream events and outcome), subscribes to
 * the tool calls' results, start markers and approval asks, waits on the turn's thread until the
 * machine's next deadline or input, and reports the turn's end, its metrics and spans. It is the only
 * writer of the turn's raw events.
 */
public final class AgentLoop implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(AgentLoop.class);
    private static final Duration DELIVERY_TIMEOUT = Duration.ofSeconds(60);

    /**
     * Everything a turn needs to know, resolved and validated.
     *
     * @param prompt null when the conversation ends with a client-side tool's result
     * @param clientTools names of the offered tools the caller runs itself: the turn ends at a call of one
     */
    public record Turn(String turnId, String threadId, String runId, ResolvedProvider provider, String fallbackModel,
                String system, List<Conversation.Entry> conversation, String prompt,
                List<ToolDefinition> tools, int maxSteps, TraceContext trace,
                String tenantId, Set<String> clientTools) {
        public Turn {
            clientTools = Set.copyOf(clientTools);
        }
    }

    private final Turn turn;
    private final TurnRegistry.ActiveTurn active;
    private final TurnRegistry registry;
    private final TurnPublisher producer;
    private final ModelCaller client;
    private final LoopWaits waits;
    private final GatewayMetrics metrics;
    private final ConversationCompactor compactor;
    private final LoopMachine machine;
    private final TurnTracing.TurnSpans spans;
    /** What happened for the machine, from Kafka's consumers and the cancel and handover signals. */
    private final BlockingQueue<LoopMachine.Input> inputs = new LinkedBlockingQueue<>();
    private final AtomicReference<Throwable> publishFailure = new AtomicReference<>();
    /** The machine's outputs not performed because one before them threw: the machine closes what they would have shown. */
    private final List<LoopMachine.Output> notPerformed = new ArrayList<>();
    private CompletableFuture<Void> lastPublished = CompletableFuture.completedFuture(null);
    /** The running step's span scope, while it runs. */
    private Scope inStep;
    /** When the running model step started (System.nanoTime), until its first output is published; 0 otherwise. */
    private long stepStarted;
    /** When the running step started (System.nanoTime). */
    private long stepBegan;
    /** When the current wait for tool results started (System.nanoTime). */
    private long awaitStarted;

    /**
     * @param progress where the turn starts: at the beginning, or where another gateway left it
     * @param waits how the turn waits: blocking its thread in the gateway, moving a clock in the simulation
     * @param allowances the tools allowed for the rest of their thread: their asks are approved by the loop
     */
    public AgentLoop(Turn turn, TurnProgress progress, TurnRegistry.ActiveTurn active, TurnRegistry registry,
              TurnPublisher producer, ModelCaller client, LoopWaits waits, GatewayMetrics metrics, LoopConfig config,
              ThreadAllowances allowances) {
        this.waits = waits;
        this.turn = turn;
        this.active = active;
        this.registry = registry;
        this.producer = producer;
        this.client = client;
        this.metrics = metrics;
        this.compactor = new ConversationCompactor(client, config);
        this.spans = metrics.tracing().turn(turn, progress.model());
        this.machine = new LoopMachine(turn, progress, config, allowances, producer.clock(),
                waits.jitter(), this::streamed);
    }

    @Override
    public void run() {
        MDC.put("turnId", turn.turnId());
        MDC.put("traceId", turn.trace().traceId());
        long started = System.nanoTime();
        LoopMachine.Output.Ended ended = null;
        try {
            active.cancel.future().thenAccept(reason -> inputs.add(new LoopMachine.Input.Cancel(reason)));
            active.handover.thenAccept(handedOver -> inputs.add(new LoopMachine.Input.Handover()));
            ended = drive();
        } catch (RuntimeException e) {
            // also when it threw performing the machine's outputs: those after it, the terminal event among them
            // maybe, are not performed, so the machine ends the turn again, with INTERNAL
            LOG.error("turn failed inside the gateway", e);
            ended = failedInside(e);
        } finally {
            endStep();
            awaitDelivery();
            ResponseStatus status = ended != null ? ended.status() : ResponseStatus.ERROR;
            boolean handedOver = active.handover.isDone();
            spans.ended(status, machine.usage(), ended != null ? ended.finishReason() : null, handedOver);
            if (handedOver) {
                registry.release(turn.turnId());
            } else {
                count(status);
                metrics.turn(turn.provider().name(), tenant(), status, Duration.ofNanos(System.nanoTime() - started));
                registry.finish(turn.turnId(), TurnPhase.endedAs(status));
            }
            LOG.info("turn finished: status {} after {} ms, usage {}", handedOver ? "handed over" : status,
                    (System.nanoTime() - started) / 1_000_000, machine.usage());
            MDC.remove("turnId");
            MDC.remove("traceId");
        }
    }

    /** Ends the turn that failed inside the gateway as its machine says, or, failing again, says it could not. */
    private LoopMachine.Output.Ended failedInside(RuntimeException failure) {
        LoopMachine.Output.Ended ended = null;
        try {
            for (LoopMachine.Output output : machine.failedInside(failure.getClass().getSimpleName(), notPerformed)) {
                if (output instanceof LoopMachine.Output.Ended end) {
                    ended = end;
                } else {
                    perform(List.of(output));
                }
            }
        } catch (RuntimeException again) {
            // its end is not written: the open transaction must not commit without it, or the turn would stay
            // unended in Kafka for good. Refused, it is aborted; the partition is taken over again and the turn goes
            // on from what was committed, as after any commit that fails
            LOG.error("the turn's end cannot be published either; its partition's transaction is refused, and the turn "
                    + "goes on from what was committed", again);
            producer.failTransaction(again);
            active.handover.complete(null);
        }
        return ended;
    }

    /** Performs the machine's outputs, feeding it what they and the turn's inputs bring, until it ends. */
    private LoopMachine.Output.Ended drive() {
        // what came before the turn ran here (a cancel, a handover) is fed first
        Deque<LoopMachine.Output> todo = new ArrayDeque<>(cameMeanwhile());
        todo.addAll(machine.start());
        try {
            return drive(todo);
        } catch (RuntimeException e) {
            notPerformed.addAll(todo);
            throw e;
        }
    }

    private LoopMachine.Output.Ended drive(Deque<LoopMachine.Output> todo) {
        while (true) {
            LoopMachine.Output output = todo.poll();
            if (output == null) {
                throw new IllegalStateException("the loop machine waits for nothing in state " + machine.state());
            }
            if (output instanceof LoopMachine.Output.Ended ended) {
                return ended;
            } else if (output instanceof LoopMachine.Output.CallModel call) {
                Span span = spans.modelCall(call.model());
                StepOutcome outcome = client.call(turn.provider().adapter(), turn.provider().endpoint(), call.request(),
                        call.items(), active.cancel);
                TurnTracing.modelCallEnded(span, outcome);
                todo.addAll(feed(new LoopMachine.Input.CallEnded(outcome, active.cancel.reason())));
            } else if (output instanceof LoopMachine.Output.Compact compact) {
                ConversationCompactor.Result result = compactor.compact(turn, compact.model(), compact.entries(),
                        active.cancel, compact.idPrefix());
                todo.addAll(feed(new LoopMachine.Input.Compacted(result, active.cancel.reason())));
            } else if (output instanceof LoopMachine.Output.WaitUntil wait) {
                LoopMachine.Input next;
                try {
                    next = waits.next(inputs, wait.at());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    next = new LoopMachine.Input.Cancel(active.cancel.reason());
                }
                todo.addAll(machine.on(next != null ? next : new LoopMachine.Input.Tick()));
            } else {
                perform(List.of(output));
            }
        }
    }

    /** The transitions the turn's machine took here, in order. */
    List<LoopMachine.Transition> transitions() {
        return machine.taken();
    }

    /** The running model call's items emitted: the machine decides what of it to publish now. */
    private void streamed(StreamPayload payload) {
        perform(machine.on(new LoopMachine.Input.Streamed(payload)));
    }

    /** Feeds what came meanwhile (a cancel, a handover, a failed write), then {@code input}. */
    private List<LoopMachine.Output> feed(LoopMachine.Input input) {
        List<LoopMachine.Output> outputs = cameMeanwhile();
        outputs.addAll(machine.on(input));
        return outputs;
    }

    private List<LoopMachine.Output> cameMeanwhile() {
        List<LoopMachine.Output> outputs = new ArrayList<>();
        for (LoopMachine.Input came = inputs.poll(); came != null; came = inputs.poll()) {
            outputs.addAll(machine.on(came));
        }
        return outputs;
    }

    /**
     * Performs outputs that need no input back: writes, statuses, metrics, subscriptions. When one throws, it and those
     * after it are noted as not performed (of a group, what of it was not).
     */
    private void perform(List<LoopMachine.Output> outputs) {
        for (int i = 0; i < outputs.size(); i++) {
            LoopMachine.Output output = outputs.get(i);
            try {
                perform(output);
            } catch (RuntimeException e) {
                notPerformed.addAll(outputs.subList(output instanceof LoopMachine.Output.Together ? i + 1 : i,
                        outputs.size()));
                throw e;
            }
        }
    }

    private void perform(LoopMachine.Output output) {
        if (output instanceof LoopMachine.Output.Publish publish) {
            publish(publish.payload());
        } else if (output instanceof LoopMachine.Output.Checkpoint checkpoint) {
            watch(producer.stepDone(checkpoint.step(), checkpoint.checkpoint()));
        } else if (output instanceof LoopMachine.Output.Together together) {
            producer.atomically(() -> perform(together.writes()));
        } else if (output instanceof LoopMachine.Output.Approve approve) {
            producer.control(ControlMessage.approval(turn.turnId(), approve.callId(), true, ThreadAllowances.REASON));
        } else if (output instanceof LoopMachine.Output.StepStarting starting) {
            endStep();
            inStep = spans.step(starting.step());
            stepBegan = System.nanoTime();
            stepStarted = stepBegan;
        } else if (output instanceof LoopMachine.Output.StepCalled called) {
            endStep();
            spans.stepCalled(called.outcome());
            metrics.step(turn.provider().name(), called.model(), called.outcome().status(),
                    Duration.ofNanos(System.nanoTime() - stepBegan));
            stepStarted = 0;
        } else if (output instanceof LoopMachine.Output.Spent spent) {
            metrics.usage(turn.provider().name(), spent.model(), tenant(), spent.usage(), spent.failed());
        } else if (output instanceof LoopMachine.Output.AwaitTools await) {
            awaitStarted = System.nanoTime();
            await.calls().forEach(this::subscribe);
        } else if (output instanceof LoopMachine.Output.ToolEnded ended) {
            if (ended.result() != null) {
                metrics.toolCall(ended.call().name(), ended.result().success(),
                        Duration.ofNanos(System.nanoTime() - awaitStarted));
            }
            spans.toolCallEnded(ended.call().callId(), ended.result(), ended.endedAs());
        } else if (output instanceof LoopMachine.Output.Count count) {
            metrics.increment(count.counter());
        } else if (output instanceof LoopMachine.Output.CancelTurn cancel) {
            active.cancel.cancel(cancel.reason());
        } else {
            throw new IllegalStateException("not an output to perform here: " + output);
        }
    }

    /** Feeds the machine a released call's result, start marker and approval ask as they come from Kafka. */
    private void subscribe(ToolCallRequest call) {
        spans.toolCallReleased(call);
        String id = call.callId();
        active.result(id).thenAccept(result -> inputs.add(new LoopMachine.Input.Result(result)));
        active.started(id).thenAccept(at -> inputs.add(new LoopMachine.Input.Started(id, at)));
        active.awaitingApproval(id).thenAccept(asked -> inputs.add(new LoopMachine.Input.ApprovalAsked(id)));
    }

    private void endStep() {
        if (inStep != null) {
            inStep.close();
            inStep = null;
        }
    }

    private void publish(StreamPayload payload) {
        if (stepStarted != 0 && (payload instanceof StreamPayload.ItemStart || payload instanceof StreamPayload.ItemDelta)) {
            metrics.timeToFirstToken(turn.provider().name(), machine.model(),
                    Duration.ofNanos(System.nanoTime() - stepStarted));
            stepStarted = 0;
        }
        CompletableFuture<Void> sent = producer.rawEvent(turn.runId(), turn.trace(), payload);
        // counted once the broker has it: a send that throws or fails published nothing. (Nothing after the send
        // throws, so a terminal event sent is the turn's end.)
        sent.thenRun(() -> metrics.increment(Counter.EVENTS_PUBLISHED));
        watch(sent);
    }

    /** A write that fails stops the turn at the end of its step: continuing would spend tokens nobody sees. */
    private void watch(CompletableFuture<Void> sent) {
        sent.whenComplete((ok, error) -> {
            if (error != null && publishFailure.compareAndSet(null, error)) {
                metrics.increment(Counter.PUBLISH_FAILURES);
                LOG.error("cannot publish the turn's events: {}", error.getMessage());
                inputs.add(new LoopMachine.Input.PublishFailed());
            }
        });
        lastPublished = sent;
    }

    /** The turn is reported finished only once its last event is on the broker. */
    private void awaitDelivery() {
        try {
            lastPublished.get(DELIVERY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.error("the turn's last events may not have reached Kafka: {}", e.getMessage());
        }
    }

    /** The turn's tenant as a metric label: {@code none} on a gateway without API keys. */
    private String tenant() {
        return turn.tenantId() == null ? "none" : turn.tenantId();
    }

    private void count(ResponseStatus status) {
        if (status == ResponseStatus.COMPLETE) {
            metrics.increment(Counter.TURNS_COMPLETED);
        } else if (status == ResponseStatus.ABORTED) {
            metrics.increment(Counter.TURNS_ABORTED);
        } else {
            metrics.increment(Counter.TURNS_FAILED);
        }
    }
}
