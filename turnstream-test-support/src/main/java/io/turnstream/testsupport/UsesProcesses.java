package io.turnstream.testsupport;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * The test starts JVMs or other programs as processes: tagged {@code processes}, so the fast lane ({@code ./mvnw -B verify -Pfast})
 * leaves it out.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Tag("processes")
public @interface UsesProcesses {
}
