package io.turnstream.model;

import java.util.regex.Pattern;

/**
 * What a tenant id may be. Tenant ids name directories of the tool executor's workspace, so they are plain
 * names: letters, digits, {@code _ . -}, starting with a letter or digit (never {@code .} or {@code ..}).
 */
public final class TenantIds {

    public static final Pattern PATTERN = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
    public static final String DESCRIPTION = "1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit";

    private TenantIds() {
    }

    public static boolean isValid(String tenantId) {
        return tenantId != null && PATTERN.matcher(tenantId).matches();
    }
}
