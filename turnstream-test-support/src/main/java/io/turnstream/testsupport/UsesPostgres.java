package io.turnstream.testsupport;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * The test starts a Postgres server: tagged {@code postgres}, so the fast lane ({@code ./mvnw -B verify -Pfast})
 * leaves it out.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Tag("postgres")
@Requires(SystemTool.POSTGRES)
public @interface UsesPostgres {
}
