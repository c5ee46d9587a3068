package io.turnstream.testsupport;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * A program outside the JDK that some tests run ({@link Requires}). Missing, it skips those tests with
 * one line saying what to install, so {@code ./mvnw -B verify} passes on a machine with only a JDK;
 * under {@code CI=true} (where {@code .ci/run} installs them all) a missing one fails them instead.
 */
public enum SystemTool {

    POSTGRES("the Postgres server (initdb, pg_ctl)", "apt-get install -y postgresql") {
        @Override
        public boolean installed() {
            return postgresBinaries().isPresent();
        }
    },
    CHROMIUM("headless Chromium and its driver (/usr/bin/chromium, /usr/bin/chromedriver)",
            "apt-get install -y chromium chromium-driver") {
        @Override
        public boolean installed() {
            return Files.isExecutable(Path.of("/usr/bin/chromium")) && Files.isExecutable(Path.of("/usr/bin/chromedriver"));
        }
    },
    NODE("node and npm", "apt-get install -y nodejs npm") {
        @Override
        public boolean installed() {
            return onPath("node") && onPath("npm");
        }
    },
    KCAT("kcat", "apt-get install -y kcat") {
        @Override
        public boolean installed() {
            return onPath("kcat");
        }
    };

    private final String what;
    private final String install;

    SystemTool(String what, String install) {
        this.what = what;
        this.install = install;
    }

    public abstract boolean installed();

    /** What to install, in one line, when the tool is missing; empty when it is installed. */
    public Optional<String> missing() {
        return installed() ? Optional.empty() : Optional.of(what + " not installed: " + install);
    }

    /** Whether the build runs under CI ({@code CI=true}), where no test may be skipped for a missing tool. */
    public static boolean underCi() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    /** The newest installed Postgres server's {@code bin} directory (Debian's layout). */
    public static Optional<Path> postgresBinaries() {
        Path root = Path.of("/usr/lib/postgresql");
        if (!Files.isDirectory(root)) {
            return Optional.empty();
        }
        try (Stream<Path> versions = Files.list(root)) {
            return versions.filter(v -> Files.isExecutable(v.resolve("bin/initdb")))
                    .max(Comparator.comparingInt(v -> Integer.parseInt(v.getFileName().toString().replaceAll("\\D", "0"))))
                    .map(v -> v.resolve("bin"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static boolean onPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        return Stream.of(path.split(File.pathSeparator))
                .filter(dir -> !dir.isBlank())
                .anyMatch(dir -> Files.isExecutable(Path.of(dir, program)));
    }
}
