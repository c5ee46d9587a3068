package io.turnstream.gateway.provider;

/**
 * Makes one step's streamed model call, emitting its items as they stream; never throws (see
 * {@link ProviderClient}, which calls providers over HTTP; the turn simulation answers in memory).
 */
@FunctionalInterface
public interface ModelCaller {

    StepOutcome call(ProviderAdapter adapter, ProviderEndpoint endpoint, ModelRequest request, StepItems items,
                     CancelSignal cancel);
}
