package io.turnstream.security;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/** A Kafka client properties file, as {@code broker --secure} writes one per principal. */
public final class ClientFile {

    private ClientFile() {
    }

    public static Properties load(Path file) {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        return p;
    }

    public static Path store(Properties client, Path file) {
        try (OutputStream out = Files.newOutputStream(file)) {
            client.store(out, null);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
        return file;
    }

    /** The principal's password, from the SCRAM login of its {@code sasl.jaas.config}. */
    public static String password(Path file) {
        String jaas = load(file).getProperty("sasl.jaas.config");
        int start = jaas.indexOf("password=\"") + "password=\"".length();
        return jaas.substring(start, jaas.indexOf('"', start));
    }
}
