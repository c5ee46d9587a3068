package io.turnstream.testsupport;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * The test starts a Kafka broker (embedded KRaft) or a whole pipeline on one: tagged {@code broker}, so the fast lane ({@code ./mvnw -B verify -Pfast})
 * leaves it out.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Tag("broker")
public @interface UsesBroker {
}
