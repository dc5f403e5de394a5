package io.tidemark.proto.record;

import java.util.Arrays;
import java.util.Objects;

/** A record header: a UTF-8 name and a value of bytes (possibly empty, never null). */
public record Header(String name, byte[] value) {
    public Header {
        Objects.requireNonNull(name, "header name");
        Objects.requireNonNull(value, "header value");
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Header h && name.equals(h.name) && Arrays.equals(value, h.value);
    }

    @Override
    public int hashCode() {
        return 31 * name.hashCode() + Arrays.hashCode(value);
    }

    @Override
    public String toString() {
        return name + "=" + Arrays.toString(value);
    }
}
