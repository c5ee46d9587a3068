package io.turnstream.tools;

import io.turnstream.model.TenantIds;
import io.turnstream.model.ToolCall;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * Which directory a call's tools are confined to. A tenant's calls run in {@code <root>/tenants/<tenant>},
 * so nothing of one tenant is visible to another's tools; a call of no tenant (a gateway without keys) runs
 * in the root itself, and is refused once the root holds tenants' directories, since it would see them all.
 * With one workspace per thread, each thread gets {@code threads/<thread>} below its tenant's directory.
 * Directories are created on first use.
 */
public final class Workspaces {

    static final String TENANTS = "tenants";
    static final String THREADS = "threads";
    /** Thread ids are chosen by clients; other names are replaced by a digest, so any id is a safe directory name. */
    private static final Pattern PLAIN_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,99}");

    private final Workspace root;
    private final boolean perThread;
    private final Map<Path, Workspace> opened = new ConcurrentHashMap<>();

    public Workspaces(Workspace root, boolean perThread) {
        this.root = root;
        this.perThread = perThread;
    }

    /** The workspace of a call's tenant (and thread), created when new. */
    public Workspace of(ToolCall call) throws ToolException {
        Path dir = root.root();
        if (call.tenantId() != null) {
            if (!TenantIds.isValid(call.tenantId())) {
                throw new ToolException(ToolErrors.ACCESS_DENIED, "the call's tenant id is not " + TenantIds.DESCRIPTION);
            }
            dir = dir.resolve(TENANTS).resolve(call.tenantId());
        } else if (Files.exists(dir.resolve(TENANTS))) {
            throw new ToolException(ToolErrors.ACCESS_DENIED, "a call of no tenant cannot run in a workspace that "
                    + "holds tenants' directories: run the gateway with API keys");
        }
        if (perThread && call.threadId() != null) {
            dir = dir.resolve(THREADS).resolve(directoryName(call.threadId()));
        }
        if (dir.equals(root.root())) {
            return root;
        }
        Path target = dir;
        try {
            return opened.computeIfAbsent(target, Workspaces::open);
        } catch (IllegalStateException e) {
            throw new ToolException(ToolErrors.TOOL_ERROR, "cannot prepare the workspace: " + e.getMessage());
        }
    }

    private static Workspace open(Path dir) {
        try {
            Files.createDirectories(dir);
            return new Workspace(dir);
        } catch (IOException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    private static String directoryName(String threadId) {
        if (PLAIN_NAME.matcher(threadId).matches()) {
            return threadId;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(threadId.getBytes(StandardCharsets.UTF_8));
            return "t-" + HexFormat.of().formatHex(digest, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
