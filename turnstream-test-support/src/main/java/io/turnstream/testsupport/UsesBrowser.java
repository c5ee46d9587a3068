package io.turnstream.testsupport;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * The test drives headless Chromium: tagged {@code browser}, so the fast lane ({@code ./mvnw -B verify -Pfast})
 * leaves it out.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Tag("browser")
@Requires(SystemTool.CHROMIUM)
public @interface UsesBrowser {
}
