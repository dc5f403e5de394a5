package io.tidemark.proto.record;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * One decoded record with both of its times. For tools, tests and consumers; the broker's append and fetch
 * paths move whole batches and never build these.
 *
 * @param key   null when the producer sent none
 * @param value null for a null value
 */
public record Record(long offset, long sendTimeMs, long receiveTimeMs, byte[] key, byte[] value,
                     List<Header> headers) {
    public Record {
        headers = List.copyOf(headers);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Record r && offset == r.offset && sendTimeMs == r.sendTimeMs
                && receiveTimeMs == r.receiveTimeMs && Arrays.equals(key, r.key) && Arrays.equals(value, r.value)
                && headers.equals(r.headers);
    }

    @Override
    public int hashCode() {
        return Objects.hash(offset, sendTimeMs, receiveTimeMs, Arrays.hashCode(key), Arrays.hashCode(value), headers);
    }

    @Override
    public String toString() {
        return "Record[offset=" + offset + ", sendTimeMs=" + sendTimeMs + ", receiveTimeMs=" + receiveTimeMs
                + ", key=" + Arrays.toString(key) + ", value=" + Arrays.toString(value) + ", headers=" + headers + "]";
    }
}
