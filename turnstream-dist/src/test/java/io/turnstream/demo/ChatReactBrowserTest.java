package io.turnstream.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.turnstream.gateway.ProviderEndpoints;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.testsupport.UsesBrowser;
import io.turnstream.testsupport.UsesNode;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;

/**
 * The React example ({@code examples/chat-react}, built by Maven with its pinned lock file) in headless
 * Chromium: its {@code useChat} talks to the gateway of the demo running in this JVM (simulated
 * provider, {@code read_file} on approval {@code ask}), the page served from another origin that the
 * gateway's CORS list allows. A prompt typed in the page streams text and tool parts, the held call is
 * approved with the page's button after a reload in the middle of the turn resumed the same message.
 * Saves target/chat-react.png.
 */
@UsesBroker
@UsesBrowser
@UsesNode
class ChatReactBrowserTest {

    /** The repository's {@code examples/chat-react}; tests run in the module's directory. */
    private static final Path APP = Path.of("..", "examples", "chat-react");
    private static final Duration TURN_TIMEOUT = Duration.ofSeconds(120);

    private static HttpServer pages;
    private static Demo demo;
    private static WebDriver browser;

    @BeforeAll
    static void startDemoPagesAndBrowser() throws Exception {
        assertThat(APP.resolve("dist/app.js"))
                .as("the React example is not built: Maven runs `npm ci` and `npm run build` in examples/chat-react "
                        + "when it builds turnstream-dist's tests (process-test-resources); run them by hand when "
                        + "running the test outside Maven").isRegularFile();
        pages = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        pages.createContext("/", ChatReactBrowserTest::servePage);
        pages.start();
        demo = Demo.start(new Demo.Options(0, ProviderEndpoints.simulatedOnly(null), "simulated", null).withSettings(Map.of(
                        "turnstream.gateway.cors.allowed-origins", pagesOrigin(),
                        "turnstream.tool-executor.approval.read_file", "ask")),
                new PrintWriter(new StringWriter()));
        browser = HeadlessChromium.start();
    }

    @AfterAll
    static void stopAll() {
        if (browser != null) {
            browser.quit();
        }
        if (demo != null) {
            demo.close();
        }
        if (pages != null) {
            pages.stop(0);
        }
    }

    @Test
    void aPromptStreamsTextAndToolPartsAndAHeldCallIsApprovedWithAButtonAfterAReloadResumedTheTurn() throws Exception {
        browser.get(pagesOrigin() + "/?gateway=" + demo.gatewayUrl());
        await().atMost(TURN_TIMEOUT).until(() -> !browser.findElements(By.id("prompt")).isEmpty());
        browser.findElement(By.id("prompt")).sendKeys(Demo.SCRIPTED_PROMPT);
        browser.findElement(By.id("send")).click();

        await().atMost(TURN_TIMEOUT).until(() -> !browser.findElements(By.cssSelector(
                ".tool[data-tool=read_file] button.approve")).isEmpty());
        assertThat(text(".tool[data-tool=list_files] .output")).contains("README.md", "flights.csv");
        assertThat(text(".tool[data-tool=read_file] .input")).isEqualTo("{\"path\":\"README.md\"}");
        assertThat(text(".tool[data-tool=read_file] .status")).isEqualTo("awaiting_approval");
        assertThat(texts(".message.assistant .text")).as("the first two steps' text").hasSize(2);
        assertThat(text("#status")).isEqualTo("streaming");
        String chatUrl = browser.getCurrentUrl();
        assertThat(chatUrl).contains("chat=chat-");

        browser.navigate().refresh();

        await().atMost(TURN_TIMEOUT).until(() -> !browser.findElements(By.cssSelector(
                ".tool[data-tool=read_file] button.approve")).isEmpty());
        assertThat(browser.getCurrentUrl()).isEqualTo(chatUrl);
        assertThat(browser.findElements(By.cssSelector(".message.assistant"))).as("the running turn, resumed").hasSize(1);
        assertThat(text(".tool[data-tool=list_files] .output")).contains("README.md", "flights.csv");
        recordTextsAsTheyChange();

        browser.findElement(By.cssSelector(".tool[data-tool=read_file] button.approve")).click();

        await().atMost(TURN_TIMEOUT).until(() -> text("#status").equals("ready"));
        assertThat(text(".tool[data-tool=read_file] .decision")).isEqualTo("approved");
        assertThat(text(".tool[data-tool=read_file] .status")).isEqualTo("completed");
        assertThat(text(".tool[data-tool=read_file] .output")).startsWith("# Rocket club flight log");
        List<String> answers = texts(".message.assistant .text");
        String answer = answers.get(answers.size() - 1);
        assertThat(answer).startsWith("`README.md` has").contains("> # Rocket club flight log");
        String whole = answerAsRecorded();
        assertThat(recordedTexts()).as("the answer showed growing before it was whole")
                .anySatisfy(seen -> assertThat(whole).startsWith(seen).isNotEqualTo(seen));
        assertThat(browser.findElements(By.id("error"))).isEmpty();

        Path screenshot = Path.of("target", "chat-react.png");
        Files.createDirectories(screenshot.getParent());
        File shot = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
        Files.copy(shot.toPath(), screenshot, StandardCopyOption.REPLACE_EXISTING);
    }

    /** Keeps every non-empty text a text part of the page shows, as it changes. */
    private static void recordTextsAsTheyChange() {
        ((JavascriptExecutor) browser).executeScript("""
                window.seenTexts = [];
                new MutationObserver(() => document.querySelectorAll('.message.assistant .text').forEach(node => {
                  if (node.textContent) window.seenTexts.push(node.textContent);
                })).observe(document.body, { subtree: true, childList: true, characterData: true });
                """);
    }

    @SuppressWarnings("unchecked")
    /** The last answer's text as the recorder reads it (textContent keeps the line breaks that getText folds). */
    private static String answerAsRecorded() {
        return (String) ((JavascriptExecutor) browser).executeScript(
                "const all = document.querySelectorAll('.message.assistant .text'); return all[all.length - 1].textContent;");
    }

    private static List<String> recordedTexts() {
        return (List<String>) ((JavascriptExecutor) browser).executeScript("return window.seenTexts;");
    }

    /** Serves the example's page and its bundle, as any static file server would. */
    private static void servePage(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getPath();
        Path file = path.equals("/") || path.equals("/index.html") ? APP.resolve("index.html")
                : path.equals("/dist/app.js") ? APP.resolve("dist/app.js") : null;
        if (file == null) {
            exchange.sendResponseHeaders(404, -1);
            exchange.close();
            return;
        }
        byte[] body = Files.readAllBytes(file);
        exchange.getResponseHeaders().set("content-type",
                path.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/html; charset=utf-8");
        exchange.sendResponseHeaders(200, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    private static String pagesOrigin() {
        return "http://127.0.0.1:" + pages.getAddress().getPort();
    }

    private static String text(String css) {
        List<WebElement> found = browser.findElements(By.cssSelector(css));
        return found.isEmpty() ? "" : found.get(0).getText().strip();
    }

    private static List<String> texts(String css) {
        return browser.findElements(By.cssSelector(css)).stream().map(WebElement::getText).toList();
    }
}
