package io.tidemark.cli;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses the times and durations users type: epoch milliseconds or ISO-8601 instants; 500ms, 10s, 5m, 2h, 30d. */
final class TimeArguments {
    private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h|d)");

    private TimeArguments() {
    }

    /** A time: epoch milliseconds ({@code 1700000000000}) or an ISO-8601 instant ({@code 2023-11-14T22:13:20Z}). */
    static long parseTime(String what, String text) {
        if (text.matches("-?\\d+")) {
            return Long.parseLong(text);
        }
        try {
            return Instant.parse(text).toEpochMilli();
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(what + " '" + text + "' is not a time: give epoch milliseconds "
                    + "(1700000000000) or an ISO-8601 instant (2023-11-14T22:13:20Z)");
        }
    }

    /**
     * A duration: a number with ms, s, m, h or d ({@code 500ms}, {@code 10s}, {@code 30d}, a day being 24 hours), or
     * ISO-8601 ({@code PT10S}).
     */
    static Duration parseDuration(String what, String text) {
        Matcher m = DURATION.matcher(text);
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            return switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofDays(n);
            };
        }
        try {
            return Duration.parse(text);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(what + " '" + text + "' is not a duration: give a number with ms, "
                    + "s, m, h or d (500ms, 10s, 5m, 30d) or ISO-8601 (PT10S)");
        }
    }
}
