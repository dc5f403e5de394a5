package io.tidemark.client.api;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;

/**
 * The checks every client config applies when it is built, so a bad value fails at construction with a message
 * that names the setting, the value given and what is allowed, instead of surfacing later as a broken call.
 *
 * <p>Stateless; safe from any thread.
 */
final class ConfigChecks {
    static final int KIB = 1024;
    static final int MIB = 1024 * KIB;

    private ConfigChecks() {
    }

    /** The addresses of a comma-separated {@code host:port} list, in order, without duplicates. */
    static List<String> bootstrap(String bootstrap) {
        if (bootstrap == null || bootstrap.isBlank()) {
            throw new IllegalArgumentException("bootstrap is not set; it must be a comma-separated list of host:port,"
                    + " e.g. \"broker1:9092,broker2:9092\"");
        }
        List<String> addresses = new ArrayList<>();
        for (String part : bootstrap.split(",", -1)) {
            String address = part.trim();
            int colon = address.lastIndexOf(':');
            if (colon <= 0 || !isPort(address.substring(colon + 1))) {
                throw new IllegalArgumentException("bootstrap = \"" + bootstrap + "\" is not allowed: \"" + address
                        + "\" is not host:port with a port in 1..65535");
            }
            addresses.add(address);
        }
        return List.copyOf(new LinkedHashSet<>(addresses));
    }

    private static boolean isPort(String text) {
        if (text.isEmpty() || text.length() > 5 || !text.chars().allMatch(Character::isDigit)) {
            return false;
        }
        int port = Integer.parseInt(text);
        return port >= 1 && port <= 65_535;
    }

    static long atLeast(String key, long value, long min, String unit) {
        if (value < min) {
            throw new IllegalArgumentException(key + " = " + value + " is not allowed; it must be at least " + min
                    + " " + unit);
        }
        return value;
    }

    static long inRange(String key, long value, long min, long max, String unit) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(key + " = " + value + " is not allowed; it must be in " + min + ".."
                    + max + " " + unit);
        }
        return value;
    }

    /** Checks {@code smaller <= larger} for two settings that bound each other. */
    static void notAbove(String smallerKey, long smaller, String largerKey, long larger) {
        if (smaller > larger) {
            throw new IllegalArgumentException(smallerKey + " = " + smaller + " is not allowed; it must not exceed "
                    + largerKey + " = " + larger);
        }
    }

    static <T> T notNull(String key, T value) {
        return Objects.requireNonNull(value, () -> key + " must not be null");
    }
}
