package io.turnstream.runtime;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/**
 * Ports nobody listens on right now on the loopback address. Every port of one call is held
 * until all are chosen, so they differ from one another: asking twice in a row may get the
 * same port back, because the system hands out a port again as soon as it is closed.
 */
public final class FreePorts {

    private FreePorts() {
    }

    /** {@code count} different free ports on 127.0.0.1. */
    public static List<Integer> take(int count) {
        List<ServerSocket> held = new ArrayList<>(count);
        try {
            List<Integer> ports = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                held.add(socket);
                ports.add(socket.getLocalPort());
            }
            return List.copyOf(ports);
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on the loopback address", e);
        } finally {
            held.forEach(FreePorts::closeQuietly);
        }
    }

    /** One free port on 127.0.0.1. */
    public static int take() {
        return take(1).get(0);
    }

    private static void closeQuietly(ServerSocket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // a socket that will not close still frees its port when the JVM exits
        }
    }
}
