package io.turnstream.gateway.security;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * An HTTP client of an event stream that stops reading: a raw socket with the smallest receive buffer the
 * kernel allows, which sends its request and reads nothing until told to, so the gateway's writes to it
 * back up as soon as a few kilobytes are in flight.
 */
final class StalledSseClient implements AutoCloseable {

    private final Socket socket;

    private StalledSseClient(Socket socket) {
        this.socket = socket;
    }

    static StalledSseClient get(int port, String path, String apiKey) throws IOException {
        Socket socket = new Socket();
        socket.setReceiveBufferSize(1024);
        // a guard against a test that would hang for ever, not a timing assertion
        socket.setSoTimeout(120_000);
        socket.connect(new InetSocketAddress("127.0.0.1", port));
        socket.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n"
                + "Authorization: Bearer " + apiKey + "\r\nAccept: text/event-stream\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
        return new StalledSseClient(socket);
    }

    /**
     * Reads at last: the status line and the body (chunked) up to the response's end.
     *
     * @return the status line, a blank line, then the body
     */
    String readResponse() throws IOException {
        InputStream in = socket.getInputStream();
        String statusLine = line(in);
        boolean chunked = false;
        for (String header = line(in); !header.isEmpty(); header = line(in)) {
            chunked |= header.toLowerCase(java.util.Locale.ROOT).replace(" ", "").equals("transfer-encoding:chunked");
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (!chunked) {
            in.transferTo(body);
        } else {
            for (int size = Integer.parseInt(line(in).split(";")[0].trim(), 16); size > 0;
                    size = Integer.parseInt(line(in).split(";")[0].trim(), 16)) {
                body.write(in.readNBytes(size));
                line(in);
            }
        }
        return statusLine + "\n\n" + body.toString(StandardCharsets.UTF_8);
    }

    /** {@link #readResponse()}, for a reader on another thread. */
    String readResponseUnchecked() {
        try {
            return readResponse();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0) {
                throw new EOFException("the connection ended in the middle of a line: " + line);
            }
            if (b != '\r') {
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
