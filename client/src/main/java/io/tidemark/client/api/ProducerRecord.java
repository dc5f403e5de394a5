package io.tidemark.client.api;

import io.tidemark.proto.record.Header;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A record to send.
 *
 * @param topic      the topic, not blank
 * @param partition  the partition, or null to let the producer choose: by the key's murmur3 hash, or a sticky
 *                   partition when the key is null
 * @param key        null for none
 * @param value      null for a null value
 * @param sendTimeMs SendTime, ms since the epoch, not negative; null to take the producer's clock at send
 * @param headers    never null after construction (null is taken as none)
 */
public record ProducerRecord(String topic, Integer partition, byte[] key, byte[] value, Long sendTimeMs,
                             List<Header> headers) {
    public ProducerRecord {
        Objects.requireNonNull(topic, "topic");
        if (topic.isBlank()) {
            throw new IllegalArgumentException("topic name is blank");
        }
        if (partition != null && partition < 0) {
            throw new IllegalArgumentException("partition " + partition + " is negative");
        }
        if (sendTimeMs != null && sendTimeMs < 0) {
            throw new IllegalArgumentException("SendTime " + sendTimeMs + " is negative; it is ms since the epoch");
        }
        headers = headers == null ? List.of() : List.copyOf(headers);
    }

    /** A record whose partition the producer chooses, with SendTime from the producer's clock. */
    public ProducerRecord(String topic, byte[] key, byte[] value) {
        this(topic, null, key, value, null, List.of());
    }

    /** A record for a given partition (null to let the producer choose), with SendTime from its clock. */
    public ProducerRecord(String topic, Integer partition, byte[] key, byte[] value) {
        this(topic, partition, key, value, null, List.of());
    }

    /** A record with a given SendTime (ms since the epoch). */
    public ProducerRecord(String topic, Integer partition, byte[] key, byte[] value, long sendTimeMs) {
        this(topic, partition, key, value, Long.valueOf(sendTimeMs), List.of());
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof ProducerRecord r && topic.equals(r.topic) && Objects.equals(partition, r.partition)
                && Arrays.equals(key, r.key) && Arrays.equals(value, r.value)
                && Objects.equals(sendTimeMs, r.sendTimeMs) && headers.equals(r.headers);
    }

    @Override
    public int hashCode() {
        return Objects.hash(topic, partition, Arrays.hashCode(key), Arrays.hashCode(value), sendTimeMs, headers);
    }

    @Override
    public String toString() {
        return "ProducerRecord[topic=" + topic + ", partition=" + partition + ", key=" + Arrays.toString(key)
                + ", value=" + (value == null ? "null" : value.length + " bytes") + ", sendTimeMs=" + sendTimeMs
                + ", headers=" + headers + "]";
    }
}
