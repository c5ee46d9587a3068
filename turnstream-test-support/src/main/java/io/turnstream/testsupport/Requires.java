package io.turnstream.testsupport;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.AnnotatedElement;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * The test class or method needs these programs. When one is missing the tests are skipped (before
 * the class's fixtures start) with one line saying what to install, printed and given as the skip
 * reason; under {@code CI=true} they fail instead ({@link SystemTool}).
 */
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(Requires.Check.class)
public @interface Requires {

    SystemTool[] value();

    /** Evaluates the annotation of the element itself: the class once, each method for its own. */
    final class Check implements ExecutionCondition {

        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            Optional<AnnotatedElement> element = context.getElement();
            List<String> missing = element.flatMap(e -> AnnotationSupport.findAnnotation(e, Requires.class))
                    .stream()
                    .flatMap(requires -> Stream.of(requires.value()))
                    .flatMap(tool -> tool.missing().stream())
                    .toList();
            if (missing.isEmpty()) {
                return ConditionEvaluationResult.enabled("the programs it needs are installed");
            }
            String reason = String.join("; ", missing);
            if (SystemTool.underCi()) {
                throw new AssertionError(context.getDisplayName() + ": " + reason
                        + " (under CI=true these tests must run; .ci/run installs it)");
            }
            System.err.println("[skipped] " + context.getDisplayName() + ": " + reason);
            return ConditionEvaluationResult.disabled(reason);
        }
    }
}
