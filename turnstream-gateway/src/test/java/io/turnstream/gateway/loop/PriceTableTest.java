package io.turnstream.gateway.loop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.turnstream.model.StreamPayload.Usage;
import io.turnstream.runtime.Settings;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class PriceTableTest {

    private static PriceTable configured(String... pairs) {
        Properties properties = new Properties();
        for (int i = 0; i < pairs.length; i += 2) {
            properties.setProperty(pairs[i], pairs[i + 1]);
        }
        return PriceTable.from(Settings.of(properties));
    }

    @Test
    void aModelIsPricedByTheLongestPrefixOfItsId() {
        PriceTable prices = configured();

        assertThat(prices.priceOf("claude-opus-4-1-20250805")).hasValue(new PriceTable.Price(15, 75, 1.5, 18.75));
        assertThat(prices.priceOf("claude-opus-4-5-20251101")).hasValue(new PriceTable.Price(5, 25, 0.5, 6.25));
        assertThat(prices.priceOf("gpt-4.1-mini-2025-04-14")).hasValue(new PriceTable.Price(0.4, 1.6, 0.1, 0.4));
        assertThat(prices.priceOf("some-local-model")).isEmpty();
    }

    @Test
    void theGpt5FamilyAndTheOSeriesHavePrices() {
        PriceTable prices = configured();

        assertThat(prices.priceOf("gpt-5-mini-2025-08-07")).hasValue(new PriceTable.Price(0.25, 2, 0.025, 0.25));
        assertThat(prices.priceOf("gpt-5-2025-08-07")).hasValue(new PriceTable.Price(1.25, 10, 0.125, 1.25));
        assertThat(prices.priceOf("gpt-5.1")).hasValue(new PriceTable.Price(1.25, 10, 0.125, 1.25));
        assertThat(prices.priceOf("o3-mini-2025-01-31")).hasValue(new PriceTable.Price(1.1, 4.4, 0.55, 1.1));
        assertThat(prices.priceOf("o3-2025-04-16")).hasValue(new PriceTable.Price(2, 8, 0.5, 2));
        assertThat(prices.priceOf("o4-mini")).hasValue(new PriceTable.Price(1.1, 4.4, 0.275, 1.1));
        assertThat(prices.priceOf("o1")).hasValue(new PriceTable.Price(15, 60, 7.5, 15));
    }

    @Test
    void cacheReadsAndWritesArePricedApartFromUncachedInput() {
        PriceTable prices = configured("turnstream.gateway.price.my-model", "2, 10, 0.2, 2.5");

        Usage usage = new Usage(1_000, 100, 1_100, 600L, 300L, null, null);

        assertThat(prices.cost("my-model", usage)).isCloseTo((100 * 2 + 600 * 0.2 + 300 * 2.5 + 100 * 10) / 1e6,
                within(1e-12));
        assertThat(prices.cost("unpriced", usage)).isNull();
    }

    @Test
    void aConfiguredPriceReplacesTheDefaultAndCachePricesDefaultToTheInputPrice() {
        PriceTable prices = configured("turnstream.gateway.price.claude-sonnet-4", "4,20");

        assertThat(prices.priceOf("claude-sonnet-4-5")).hasValue(new PriceTable.Price(4, 20, 4, 4));
    }

    @Test
    void aPriceThatIsNotNumbersIsRefusedWithTheKeyAndTheExpectedForm() {
        assertThatThrownBy(() -> configured("turnstream.gateway.price.x", "cheap"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("turnstream.gateway.price.x must be 'input,output[,cache read[,cache write]]' in USD per "
                        + "million tokens, got 'cheap'");
    }
}
