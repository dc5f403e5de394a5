package io.tidemark.core.config;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * One text configuration key, declared once like a {@link ConfigKey}: name, default, what is allowed and what it
 * does. A value is checked by {@code rule}; a bad one is refused with the key, the value and {@code allowed}.
 *
 * @param defaultValue empty when the key has no value unless one is set
 * @param rule         whether a value is allowed
 * @param allowed      what {@code rule} allows, in words
 */
public record TextKey(String name, Optional<String> defaultValue, Predicate<String> rule, String allowed, String doc)
        implements DeclaredKey {
    /** Shown in the unit column: a text has none. */
    private static final String NO_UNIT = "-";

    public TextKey {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(allowed, "allowed");
        Objects.requireNonNull(doc, "doc");
        defaultValue.filter(rule.negate()).ifPresent(bad -> {
            throw new IllegalStateException("default '" + bad + "' of " + name + " is not " + allowed);
        });
    }

    /**
     * Returns {@code value} when it is allowed.
     *
     * @throws TidemarkException {@link ErrorCode#INVALID_CONFIG} naming the key, the value and what is allowed
     */
    public String validate(String value) {
        if (!rule.test(value)) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, "invalid value for " + name + ": '" + value
                    + "' is not allowed; allowed: " + allowed);
        }
        return value;
    }

    @Override
    public String typeName() {
        return "string";
    }

    @Override
    public String defaultText() {
        return defaultValue.orElse("(none)");
    }

    @Override
    public String unit() {
        return NO_UNIT;
    }

    @Override
    public String allowedText() {
        return allowed;
    }
}
