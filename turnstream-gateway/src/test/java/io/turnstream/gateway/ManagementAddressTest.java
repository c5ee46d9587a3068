package io.turnstream.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.runtime.Settings;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** Health and metrics stay on loopback unless the operator says otherwise, wherever the API listens. */
class ManagementAddressTest {

    @Test
    void theManagementPortDoesNotFollowAPublicApiAddress() {
        Settings publicApi = Settings.of(new Properties()).with(GatewayConfig.PREFIX + "host", "0.0.0.0");
        assertThat(GatewayConfig.from(publicApi).host()).isEqualTo("0.0.0.0");
        assertThat(GatewayConfig.from(publicApi).managementHost()).isEqualTo("127.0.0.1");
        assertThat(GatewayConfig.from(publicApi.with(GatewayConfig.MANAGEMENT_HOST, "10.0.0.7")).managementHost())
                .isEqualTo("10.0.0.7");
    }
}
