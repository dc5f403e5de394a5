package io.tidemark.core.config;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.util.Objects;

/**
 * One configuration key, declared once: name, type, default, unit, what is allowed and what it does. Parsing
 * and validation both go through here, so a bad value is refused with the same message wherever it comes
 * from (a topic create request, a config file, a command-line flag, code).
 *
 * <p>Numeric keys: every topic key is an int or a long ({@link TextKey} declares a text key). A negative value is
 * only allowed where {@link Allowed} says so, and then means "unlimited".
 *
 * @param unit     what the number counts ("bytes", "ms", "messages"), last in the name as in {@code retention.ms}
 */
public record ConfigKey(String name, Type type, long defaultValue, String unit, Allowed allowed, String doc)
        implements DeclaredKey {
    public enum Type { INT, LONG }

    public ConfigKey {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(unit, "unit");
        Objects.requireNonNull(allowed, "allowed");
        Objects.requireNonNull(doc, "doc");
        if (!allowed.permits(defaultValue)) {
            throw new IllegalStateException("default " + defaultValue + " of " + name + " is not " + allowed);
        }
        if (type == Type.INT && (allowed.max() > Integer.MAX_VALUE || allowed.min() < Integer.MIN_VALUE)) {
            throw new IllegalStateException(name + " is an int but allows " + allowed);
        }
    }

    /** Parses and validates a value given as text. */
    public long parse(String text) {
        long value;
        try {
            value = Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            throw invalid("'" + text + "' is not an integer");
        }
        return validate(value);
    }

    /** Returns {@code value} when it is allowed. */
    public long validate(long value) {
        if (!allowed.permits(value)) {
            throw invalid(value + " is not allowed");
        }
        return value;
    }

    @Override
    public String typeName() {
        return type.name().toLowerCase();
    }

    @Override
    public String defaultText() {
        return defaultValue == UNLIMITED && allowed.unlimited() ? "-1 (unlimited)" : Long.toString(defaultValue);
    }

    @Override
    public String allowedText() {
        return allowed.toString();
    }

    private TidemarkException invalid(String what) {
        return new TidemarkException(ErrorCode.INVALID_CONFIG, "invalid value for " + name + ": " + what
                + "; allowed: " + allowed + " (" + unit + ")");
    }

    /**
     * The values a key accepts: an inclusive range, and optionally -1 for "unlimited".
     */
    public record Allowed(long min, long max, boolean unlimited) {
        public static Allowed atLeast(long min, long max) {
            return new Allowed(min, max, false);
        }

        public static Allowed atLeastOrUnlimited(long min) {
            return new Allowed(min, Long.MAX_VALUE, true);
        }

        boolean permits(long value) {
            return (value >= min && value <= max) || (unlimited && value == UNLIMITED);
        }

        @Override
        public String toString() {
            String range = max == Long.MAX_VALUE ? "an integer >= " + min
                    : "an integer in [" + min + ", " + max + "]";
            return unlimited ? range + ", or -1 for unlimited" : range;
        }
    }

    /** The value that means "no limit" where a key allows it. */
    public static final long UNLIMITED = -1;
}
