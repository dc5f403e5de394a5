package io.tidemark.core.config;

import java.util.Arrays;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a topic does with old records ({@code cleanup.policy}): delete whole segments by {@code retention.ms} and
 * {@code retention.bytes}, compact (keep the latest record of each key), or both. Written as Kafka writes it:
 * {@code delete}, {@code compact}, or both separated by a comma in either order.
 */
public enum CleanupPolicy {
    DELETE("delete"),
    COMPACT("compact"),
    COMPACT_DELETE("compact,delete");

    /** What {@link #parse} takes, in words. */
    public static final String ALLOWED = "delete, compact, or compact,delete";

    private final String text;

    CleanupPolicy(String text) {
        this.text = text;
    }

    /** Whether retention deletes segments. */
    public boolean deletes() {
        return this != COMPACT;
    }

    /** Whether the cleaner compacts the log. */
    public boolean compacts() {
        return this != DELETE;
    }

    public String text() {
        return text;
    }

    /** The policy a value names: a comma-separated set of {@code delete} and {@code compact}, spaces ignored. */
    public static Optional<CleanupPolicy> parse(String value) {
        Set<String> words = new TreeSet<>();
        for (String word : value.split(",", -1)) {
            words.add(word.trim());
        }
        String sorted = String.join(",", words);
        return Arrays.stream(values()).filter(p -> p.text.equals(sorted)).findFirst();
    }
}
