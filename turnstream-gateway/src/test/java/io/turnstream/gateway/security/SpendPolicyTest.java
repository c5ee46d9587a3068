package io.turnstream.gateway.security;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.loop.PriceTable;
import io.turnstream.runtime.Settings;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** A tenant spends the operator's keys only on the models it is allowed, within the operator's step limit. */
class SpendPolicyTest {

    private static SpendPolicy policy(String... keyValues) {
        Properties props = new Properties();
        for (int i = 0; i < keyValues.length; i += 2) {
            props.setProperty(keyValues[i], keyValues[i + 1]);
        }
        Settings settings = Settings.of(props);
        return SpendPolicy.from(settings, 10, PriceTable.from(settings), "claude-fallback-unpriced");
    }

    @Test
    void maxStepsOverTheOperatorsLimitIs400() {
        SpendPolicy spend = policy("turnstream.gateway.max-steps-limit", "20");

        assertThatCode(() -> spend.check("tenant-a", "anthropic", "claude-sonnet-4-5", 20)).doesNotThrowAnyException();
        assertThatThrownBy(() -> spend.check("tenant-a", "anthropic", "claude-sonnet-4-5", 100)).isInstanceOfSatisfying(ApiError.class,
                e -> org.assertj.core.api.Assertions.assertThat(e.status()).isEqualTo(400));
    }

    @Test
    void aDefaultOfNoStepIsRefusedAtStart() {
        Settings settings = Settings.of(new Properties());

        assertThatThrownBy(() -> SpendPolicy.from(settings, 0, PriceTable.from(settings), null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max-steps (0) must be at least 1");
    }

    @Test
    void aTenantUsesOnlyItsAllowedModels() {
        SpendPolicy spend = policy("turnstream.gateway.allowed-models", "anthropic:claude-cheap,simulated:*",
                "turnstream.gateway.tenant.tenant-rich.allowed-models", "anthropic:*");

        assertThatCode(() -> spend.check("tenant-a", "anthropic", "claude-cheap", null)).doesNotThrowAnyException();
        assertThatCode(() -> spend.check("tenant-a", "simulated", "any", null)).doesNotThrowAnyException();
        assertThatThrownBy(() -> spend.check("tenant-a", "anthropic", "claude-expensive", null))
                .isInstanceOfSatisfying(ApiError.class, e -> org.assertj.core.api.Assertions.assertThat(e.status()).isEqualTo(403))
                .hasMessageContaining("may not use model 'claude-expensive'");
        assertThatCode(() -> spend.check("tenant-rich", "anthropic", "claude-expensive", null)).doesNotThrowAnyException();
    }

    @Test
    void withoutAListOnlyTheModelsTheOperatorConfiguredAreAllowed() {
        SpendPolicy spend = policy("turnstream.gateway.price.my-finetune", "1,2");

        assertThatCode(() -> spend.check("tenant-a", "anthropic", "claude-sonnet-4-5-20250929", null))
                .as("a model of the built-in price table").doesNotThrowAnyException();
        assertThatCode(() -> spend.check("tenant-a", "openai", "my-finetune-v2", null))
                .as("a model the operator priced").doesNotThrowAnyException();
        assertThatCode(() -> spend.check("tenant-a", "anthropic", "claude-fallback-unpriced", null))
                .as("the operator's fallback model").doesNotThrowAnyException();
        assertThatCode(() -> spend.check("tenant-a", "simulated", "anything", null)).doesNotThrowAnyException();
        assertThatThrownBy(() -> spend.check("tenant-a", "openai", "gpt-unheard-of", null))
                .isInstanceOfSatisfying(ApiError.class, e -> org.assertj.core.api.Assertions.assertThat(e.status()).isEqualTo(403))
                .hasMessage("tenant tenant-a may not use model 'gpt-unheard-of' of provider 'openai': without "
                        + "turnstream.gateway.allowed-models, only the models this gateway has a price for "
                        + "(turnstream.gateway.price.<model>) and the simulated provider's are allowed");
    }

    @Test
    void aDefaultOverTheLimitIsAConfigurationError() {
        assertThatThrownBy(() -> policy("turnstream.gateway.max-steps-limit", "5"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max-steps-limit");
    }
}
