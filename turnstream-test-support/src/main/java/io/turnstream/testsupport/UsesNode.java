package io.turnstream.testsupport;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * The test runs node programs (npm packages installed by Maven's npm ci): tagged {@code node}, so the fast lane ({@code ./mvnw -B verify -Pfast})
 * leaves it out.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Tag("node")
@Requires(SystemTool.NODE)
public @interface UsesNode {
}
