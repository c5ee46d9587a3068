package io.turnstream.cli;

import io.turnstream.runtime.HealthServer;
import io.turnstream.runtime.Settings;
import picocli.CommandLine.Option;

/**
 * {@code --health-host}, shared by the services with a health endpoint: loopback unless told
 * otherwise (in a container, 0.0.0.0 with the port published on the host's loopback).
 */
public final class HealthHostOption {

    @Option(names = "--health-host", paramLabel = "ADDRESS",
            description = "Address of the health and metrics endpoint (default: " + HealthServer.HOST + ", else "
                    + HealthServer.LOOPBACK + "; 0.0.0.0 for every interface, as in a container).")
    private String host;

    /** The settings with the flag's address, when given. */
    public Settings applyTo(Settings settings) {
        return host == null ? settings : settings.with(HealthServer.HOST, host);
    }
}
