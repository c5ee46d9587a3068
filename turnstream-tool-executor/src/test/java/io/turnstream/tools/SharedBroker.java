package io.turnstream.tools;

import io.turnstream.runtime.EmbeddedKafkaBroker;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * One embedded broker for every tool test class in the run (each test uses its own topics), started on
 * first use and stopped when the run ends: {@code @ExtendWith(SharedBroker.class)}, then take an
 * {@link EmbeddedKafkaBroker} parameter.
 */
final class SharedBroker implements ParameterResolver {

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == EmbeddedKafkaBroker.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return context.getRoot().getStore(ExtensionContext.Namespace.create(SharedBroker.class))
                .getOrComputeIfAbsent("broker", key -> EmbeddedKafkaBroker.onFreePort().start(), EmbeddedKafkaBroker.class);
    }
}
