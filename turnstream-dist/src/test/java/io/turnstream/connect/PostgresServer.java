package io.turnstream.connect;

import io.turnstream.runtime.FreePorts;
import io.turnstream.testsupport.SystemTool;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.utils.Utils;

/**
 * A real Postgres cluster of its own for a test class: {@code initdb} into a temporary directory and
 * {@code pg_ctl start} on a free loopback port, from the Debian {@code postgresql} package. Runs as
 * the {@code postgres} user when the tests run as root, as Postgres refuses root.
 */
final class PostgresServer implements AutoCloseable {

    static final String DATABASE = "turnstream";
    static final String USER = "postgres";

    private final Path dir;
    private final Path bin;
    private final int port;

    private PostgresServer(Path dir, Path bin, int port) {
        this.dir = dir;
        this.bin = bin;
        this.port = port;
    }

    static PostgresServer start() throws IOException, InterruptedException, SQLException {
        Path bin = binaries();
        Path dir = Files.createTempDirectory("turnstream-postgres");
        PostgresServer server = new PostgresServer(dir, bin, FreePorts.take());
        if (isRoot()) {
            run(List.of("chown", "-R", USER, dir.toString()));
        }
        server.asPostgres(List.of(bin.resolve("initdb").toString(), "-D", server.data(), "-U", USER, "-A", "trust",
                "-E", "UTF8", "--locale=C", "--no-sync"));
        server.asPostgres(List.of(bin.resolve("pg_ctl").toString(), "-D", server.data(), "-l", dir.resolve("server.log").toString(),
                "-o", "-p " + server.port + " -h 127.0.0.1 -k " + dir + " -F", "-w", "-t", "60", "start"));
        try (Connection connection = DriverManager.getConnection(server.jdbcUrl("postgres"), USER, null);
             Statement statement = connection.createStatement()) {
            statement.execute("CREATE DATABASE " + DATABASE);
        }
        return server;
    }

    String jdbcUrl() {
        return jdbcUrl(DATABASE);
    }

    Connection connect() throws SQLException {
        return DriverManager.getConnection(jdbcUrl(), USER, null);
    }

    @Override
    public void close() throws IOException, InterruptedException {
        asPostgres(List.of(bin.resolve("pg_ctl").toString(), "-D", data(), "-m", "immediate", "-w", "stop"));
        Utils.delete(dir.toFile());
    }

    private String jdbcUrl(String database) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database;
    }

    private String data() {
        return dir.resolve("data").toString();
    }

    private void asPostgres(List<String> command) throws IOException, InterruptedException {
        List<String> full = new ArrayList<>();
        if (isRoot()) {
            full.addAll(List.of("runuser", "-u", USER, "--"));
        }
        full.addAll(command);
        run(full);
    }

    private static void run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed:\n" + output);
        }
    }

    private static Path binaries() {
        return SystemTool.postgresBinaries().orElseThrow(() -> new IllegalStateException(
                "Postgres server binaries not found under /usr/lib/postgresql: install them with "
                        + "`apt-get install -y postgresql` (.ci/run does)"));
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }
}
