package io.turnstream.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.acl.AclBinding;

/**
 * SASL/SCRAM-SHA-256 and ACLs for an {@link EmbeddedKafkaBroker}: one principal per service, each with
 * a random password kept in {@code <credentials dir>/<principal>.properties}, a Kafka client
 * properties file that any Turnstream command takes as {@code --config}, and in
 * {@code <principal>.librdkafka.conf}, the same for librdkafka clients ({@code kcat -F FILE}). The
 * {@link #ADMIN} principal is the only super user; the broker itself authenticates as it (SCRAM between
 * broker and clients, PLAIN on the loopback controller listener, where KRaft cannot use SCRAM). The other
 * principals get exactly the ACLs they are given. The client listener also takes PLAIN, with the same
 * principals and passwords, for librdkafka clients: before librdkafka 2.6.1 (Debian 12's kcat ships 2.0.2)
 * their SCRAM client-final message repeats the client nonce, which Kafka 4 refuses (CVE-2024-56128); PLAIN
 * sends the password itself, so it is offered by a loopback broker only: a broker clients reach over a network
 * (in a container) takes SCRAM alone, and its librdkafka files use SCRAM (librdkafka 2.6.1 or later).
 * {@link #sharing} adds a secret some principals share (the tenant claim key) to their client files.
 */
public final class BrokerSecurity {

    public static final String ADMIN = "admin";
    public static final String MECHANISM = "SCRAM-SHA-256";
    public static final String PROTOCOL = "SASL_PLAINTEXT";
    /** What librdkafka clients log in with (see the class comment). */
    public static final String LIBRDKAFKA_MECHANISM = "PLAIN";
    private static final String PASSWORD_KEY = "sasl.jaas.config";
    private static final int ITERATIONS = 8192;
    private static final String PLAIN_LOGIN = "org.apache.kafka.common.security.plain.PlainLoginModule required";

    private final Path credentialsDir;
    private final Map<String, String> passwords;
    private final List<AclBinding> acls;
    private SharedSecret shared;

    /** A secret some principals share, kept in a file of the credentials directory and named in their client files. */
    private record SharedSecret(Path file, String settingKey, Set<String> principals, String value) {
    }

    private BrokerSecurity(Path credentialsDir, Map<String, String> passwords, Collection<AclBinding> acls) {
        this.credentialsDir = credentialsDir;
        this.passwords = passwords;
        this.acls = List.copyOf(acls);
    }

    /**
     * The admin and {@code principals}, with the passwords already in {@code credentialsDir} (a broker
     * restarted on its data directory keeps them) or new random ones.
     */
    public static BrokerSecurity in(Path credentialsDir, Collection<String> principals, Collection<AclBinding> acls) {
        Map<String, String> passwords = new LinkedHashMap<>();
        List<String> all = new ArrayList<>();
        all.add(ADMIN);
        principals.stream().filter(p -> !p.equals(ADMIN)).forEach(all::add);
        SecureRandom random = new SecureRandom();
        for (String principal : all) {
            String kept = keptPassword(credentialsDir.resolve(principal + ".properties"));
            passwords.put(principal, kept != null ? kept : newPassword(random));
        }
        return new BrokerSecurity(credentialsDir, passwords, acls);
    }

    /**
     * Gives {@code principals} a random secret (kept across restarts) in {@code <credentials dir>/<fileName>}
     * (owner only), named in their client files under {@code settingKey}: the services that must trust each
     * other beyond the ACLs (the tenant claim key of the gateway, the topology and the tool executor).
     */
    public BrokerSecurity sharing(String fileName, String settingKey, Collection<String> principals) {
        Path file = credentialsDir.resolve(fileName);
        String kept = null;
        if (Files.exists(file)) {
            try {
                kept = Files.readString(file).strip();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + file, e);
            }
        }
        shared = new SharedSecret(file, settingKey, Set.copyOf(principals),
                kept != null && !kept.isEmpty() ? kept : newPassword(new SecureRandom()));
        return this;
    }

    /** Whether {@code credentialsDir} holds the admin's credentials, as a secured broker's data directory does. */
    public static boolean present(Path credentialsDir) {
        return Files.exists(credentialsDir.resolve(ADMIN + ".properties"));
    }

    public Path credentialsDir() {
        return credentialsDir;
    }

    public List<String> principals() {
        return List.copyOf(passwords.keySet());
    }

    /**
     * The broker settings: every listener authenticates, the standard KRaft authorizer decides.
     *
     * @param loopbackOnly whether the client listener is on loopback, the only place PLAIN is offered
     */
    Map<String, String> brokerProperties(String clientListener, String controllerListener, boolean loopbackOnly) {
        String client = clientListener.toLowerCase(java.util.Locale.ROOT);
        String controller = controllerListener.toLowerCase(java.util.Locale.ROOT);
        String admin = passwords.get(ADMIN);
        Map<String, String> p = new LinkedHashMap<>();
        p.put("listener.security.protocol.map", clientListener + ":" + PROTOCOL + "," + controllerListener + ":" + PROTOCOL);
        p.put("listener.name." + client + ".sasl.enabled.mechanisms", loopbackOnly ? MECHANISM + "," + LIBRDKAFKA_MECHANISM : MECHANISM);
        p.put("listener.name." + client + ".scram-sha-256.sasl.jaas.config", scramJaas(ADMIN, admin));
        if (loopbackOnly) {
            p.put("listener.name." + client + ".plain.sasl.jaas.config", plainJaas(passwords.keySet()));
        }
        p.put("sasl.mechanism.inter.broker.protocol", MECHANISM);
        p.put("listener.name." + controller + ".sasl.enabled.mechanisms", "PLAIN");
        p.put("listener.name." + controller + ".plain.sasl.jaas.config",
                PLAIN_LOGIN + " username=\"" + ADMIN + "\" password=\"" + admin + "\" user_" + ADMIN + "=\"" + admin + "\";");
        p.put("sasl.mechanism.controller.protocol", "PLAIN");
        p.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        p.put("super.users", "User:" + ADMIN);
        p.put("allow.everyone.if.no.acl.found", "false");
        return p;
    }

    /** The admin's SCRAM credential, written into the metadata when the data directory is formatted. */
    List<String> formatScramArguments() {
        return List.of(MECHANISM + "=[name=" + ADMIN + ",iterations=" + ITERATIONS + ",password=" + passwords.get(ADMIN) + "]");
    }

    /** Client properties of {@code principal}: SASL/SCRAM with its password. */
    public Properties clientProperties(String principal) {
        String password = passwords.get(principal);
        if (password == null) {
            throw new IllegalArgumentException("no principal " + principal + " (known: " + passwords.keySet() + ")");
        }
        Properties p = new Properties();
        p.setProperty("security.protocol", PROTOCOL);
        p.setProperty("sasl.mechanism", MECHANISM);
        p.setProperty(PASSWORD_KEY, scramJaas(principal, password));
        if (shared != null && shared.principals().contains(principal)) {
            p.setProperty(shared.settingKey(), shared.file().toString());
        }
        return p;
    }

    /** The client properties file of {@code principal}. */
    public Path clientFile(String principal) {
        return credentialsDir.resolve(principal + ".properties");
    }

    /** The librdkafka configuration file of {@code principal} ({@code kcat -F FILE}). */
    public Path librdkafkaFile(String principal) {
        return credentialsDir.resolve(principal + ".librdkafka.conf");
    }

    /** Settings of {@code principal} for librdkafka clients: SASL/PLAIN on loopback, else SCRAM (see the class comment). */
    private String librdkafkaSettings(String principal, String bootstrapServers, boolean loopbackOnly) {
        return "# librdkafka settings of principal " + principal + " (turnstream broker --secure): kcat -F FILE\n"
                + "bootstrap.servers=" + bootstrapServers + "\n"
                + "security.protocol=" + PROTOCOL + "\n"
                + "sasl.mechanisms=" + (loopbackOnly ? LIBRDKAFKA_MECHANISM : MECHANISM) + "\n"
                + "sasl.username=" + principal + "\n"
                + "sasl.password=" + passwords.get(principal) + "\n";
    }

    /**
     * Creates every principal but the admin (which the format created) and the ACLs; idempotent, so it
     * runs on every start. Then writes each principal's client file with {@code bootstrapServers}.
     */
    void provision(Admin admin, String bootstrapServers, boolean loopbackOnly) throws InterruptedException, ExecutionException, TimeoutException {
        List<org.apache.kafka.clients.admin.UserScramCredentialAlteration> users = new ArrayList<>();
        passwords.forEach((principal, password) -> {
            if (!principal.equals(ADMIN)) {
                users.add(new UserScramCredentialUpsertion(principal,
                        new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, ITERATIONS), password));
            }
        });
        if (!users.isEmpty()) {
            admin.alterUserScramCredentials(users).all().get(60, TimeUnit.SECONDS);
        }
        if (!acls.isEmpty()) {
            admin.createAcls(acls).all().get(60, TimeUnit.SECONDS);
        }
        writeClientFiles(bootstrapServers, loopbackOnly);
    }

    /** Each principal's client file, with {@code bootstrapServers}: rewritten on every start, as the port may change. */
    void writeClientFiles(String bootstrapServers, boolean loopbackOnly) {
        try {
            if (!Files.isDirectory(credentialsDir)) {
                Files.createDirectories(credentialsDir);
                ownerOnly(credentialsDir, "rwx------");
            }
            for (String principal : passwords.keySet()) {
                Properties p = clientProperties(principal);
                p.setProperty("bootstrap.servers", bootstrapServers);
                StringWriter properties = new StringWriter();
                p.store(properties, "Kafka client settings of principal " + principal + " (turnstream broker --secure); "
                        + "pass as --config FILE");
                writeOwnerOnly(clientFile(principal), properties.toString());
                writeOwnerOnly(librdkafkaFile(principal), librdkafkaSettings(principal, bootstrapServers, loopbackOnly));
            }
            if (shared != null) {
                writeOwnerOnly(shared.file(), shared.value() + "\n");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the client credentials to " + credentialsDir, e);
        }
    }

    private static void writeOwnerOnly(Path file, String content) throws IOException {
        Files.deleteIfExists(file);
        Files.createFile(file);
        ownerOnly(file, "rw-------");
        Files.writeString(file, content, StandardOpenOption.TRUNCATE_EXISTING);
    }

    private static void ownerOnly(Path path, String permissions) throws IOException {
        if (path.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(permissions));
        }
    }

    private static String keptPassword(Path file) {
        if (!Files.exists(file)) {
            return null;
        }
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        String jaas = p.getProperty(PASSWORD_KEY, "");
        int start = jaas.indexOf("password=\"");
        int end = start < 0 ? -1 : jaas.indexOf('"', start + 10);
        if (end < 0) {
            throw new IllegalStateException(file + " holds no password in " + PASSWORD_KEY);
        }
        return jaas.substring(start + 10, end);
    }

    private static String newPassword(SecureRandom random) {
        byte[] bytes = new byte[24];
        random.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /** The broker's PLAIN login: every principal with its password. */
    private String plainJaas(Collection<String> principals) {
        StringBuilder jaas = new StringBuilder(PLAIN_LOGIN);
        principals.forEach(p -> jaas.append(" user_").append(p).append("=\"").append(passwords.get(p)).append('"'));
        return jaas.append(';').toString();
    }

    private static String scramJaas(String user, String password) {
        return "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + user
                + "\" password=\"" + password + "\";";
    }
}
