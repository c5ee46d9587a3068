package io.turnstream.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.turnstream.gateway.ProviderEndpoints;
import io.turnstream.gateway.view.TurnRecords;
import io.turnstream.model.ChangeType;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.testsupport.UsesBrowser;
import java.io.File;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;

/**
 * The web view in a real browser: headless Chromium (Debian's chromium and chromium-driver) opens the
 * page served by the demo running in this JVM, submits a prompt and watches the turn render live from
 * the SSE stream of upserts and appends. Saves target/web-view.png.
 */
@UsesBroker
@UsesBrowser
class WebViewBrowserTest {

    private static final Duration TURN_TIMEOUT = Duration.ofSeconds(90);

    private static Demo demo;
    private static WebDriver browser;
    /** Writes records as the topology does, for the page's append handling. */
    private static KafkaProducer<String, String> producer;

    @BeforeAll
    static void startDemoAndBrowser() throws Exception {
        demo = Demo.start(new Demo.Options(0, ProviderEndpoints.simulatedOnly(null), "simulated", null),
                new PrintWriter(new StringWriter()));
        producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, demo.bootstrapServers()),
                new StringSerializer(), new StringSerializer());
        browser = HeadlessChromium.start();
    }

    @AfterAll
    static void stopBrowserAndDemo() {
        if (browser != null) {
            browser.quit();
        }
        if (producer != null) {
            producer.close();
        }
        if (demo != null) {
            demo.close();
        }
    }

    @Test
    void aPromptTypedInThePageRendersLiveWithToolCallsTheirOutputsAndTheAnswer() throws Exception {
        browser.get(demo.gatewayUrl() + "/");
        browser.findElement(By.id("prompt")).sendKeys("What is in this workspace?");
        browser.findElement(By.id("send")).click();

        await().atMost(TURN_TIMEOUT).until(() -> text(".turn .turn-status").equals("complete"));

        assertThat(text(".turn .message.user .content")).isEqualTo("What is in this workspace?");
        assertThat(texts(".turn .tool_call .call b")).containsExactly("list_files", "read_file");
        assertThat(text(".tool_call[data-call-id] .tool_output pre"))
                .as("the listing, shown under its call").contains("README.md", "flights.csv");
        assertThat(texts(".tool_output pre")).anySatisfy(output -> assertThat(output)
                .startsWith("# Rocket club flight log").contains("notes/next-launch.md"));
        assertThat(texts(".turn .message.agent .content")).last().satisfies(answer -> assertThat(answer)
                .startsWith("`README.md` has").contains("> # Rocket club flight log"));
        assertThat(browser.findElements(By.cssSelector(".turn .reasoning details"))).hasSize(2);
        assertThat(browser.findElements(By.cssSelector(".streaming"))).as("nothing left half-streamed").isEmpty();

        Path screenshot = Path.of("target", "web-view.png");
        Files.createDirectories(screenshot.getParent());
        File shot = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
        Files.copy(shot.toPath(), screenshot, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertThat(Files.size(screenshot)).isPositive();
    }

    @Test
    void aPageOpenedOnAFinishedTurnShowsItsCurrentState() {
        String turnId = demo.startTurn("What does notes/next-launch.md say?").turnId();
        await().atMost(TURN_TIMEOUT).until(() -> demo.finished(turnId).isDone());

        browser.get(demo.gatewayUrl() + "/?turn=" + turnId);

        await().atMost(TURN_TIMEOUT).until(() -> text(".turn .turn-status").equals("complete"));
        assertThat(texts(".turn .tool_call .call b")).containsExactly("read_file");
        assertThat(texts(".turn .message.agent .content")).last().satisfies(answer -> assertThat(answer)
                .startsWith("`notes/next-launch.md` has").contains("Saturday launch"));
    }

    @Test
    void appendedTextAppearsBetweenUpsertsAndAGapWaitsForTheNextUpsert() {
        TurnRecords turn = new TurnRecords(producer, "thread-web");
        turn.started();
        turn.message("answer", "Appends carry", ChangeType.CREATED);
        browser.get(demo.gatewayUrl() + "/?turn=" + turn.id);
        await().atMost(TURN_TIMEOUT).until(() -> text(".turn .message.agent .content").equals("Appends carry"));

        turn.append("answer", 13, " the text");
        turn.append("answer", 22, " between upserts.");
        await().atMost(TURN_TIMEOUT).until(() -> text(".turn .message.agent .content")
                .equals("Appends carry the text between upserts."));
        turn.append("answer", 60, " (after a gap)");
        turn.message("answer", "Appends carry the text between upserts. Upserts heal", ChangeType.UPDATED);
        await().atMost(TURN_TIMEOUT).until(() -> text(".turn .message.agent .content")
                .equals("Appends carry the text between upserts. Upserts heal"));
        turn.append("answer", 52, " gaps.");
        await().atMost(TURN_TIMEOUT).until(() -> text(".turn .message.agent .content")
                .equals("Appends carry the text between upserts. Upserts heal gaps."));
        turn.message("answer", "Appends carry the text between upserts. Upserts heal gaps.", ChangeType.COMPLETED);
        turn.completed();

        await().atMost(TURN_TIMEOUT).until(() -> text(".turn .turn-status").equals("complete"));
        assertThat(browser.findElement(By.cssSelector(".turn .message.agent")).getAttribute("data-appends"))
                .as("appends applied: two, then one after the gap was healed").isEqualTo("3");
    }

    private static String text(String css) {
        List<WebElement> found = browser.findElements(By.cssSelector(css));
        return found.isEmpty() ? "" : found.get(0).getText();
    }

    private static List<String> texts(String css) {
        return browser.findElements(By.cssSelector(css)).stream().map(WebElement::getText).toList();
    }
}
