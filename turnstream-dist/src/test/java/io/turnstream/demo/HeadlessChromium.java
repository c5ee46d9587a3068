package io.turnstream.demo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/** Debian's headless Chromium driven by its chromedriver, for the browser tests ({@code @UsesBrowser}). */
final class HeadlessChromium {

    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

    private HeadlessChromium() {
    }

    static WebDriver start() throws IOException {
        // the system's driver and browser, given explicitly, so Selenium Manager downloads nothing
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile()).usingAnyFreePort().build();
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        // without the background-networking flags Chromium tries hosts this closed network refuses
        options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1000,1080",
                "--user-data-dir=" + Files.createTempDirectory("turnstream-chromium"));
        return new ChromeDriver(service, options);
    }
}
