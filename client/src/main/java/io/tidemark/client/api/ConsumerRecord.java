package io.tidemark.client.api;

import io.tidemark.proto.record.Header;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A record read from a partition, with both of its times.
 *
 * @param key           null when the producer sent none
 * @param value         null for a null value
 * @param sendTimeMs    SendTime set by the producer, ms since the epoch
 * @param receiveTimeMs ReceiveTime stamped by the partition leader, ms since the epoch
 */
public record ConsumerRecord(String topic, int partition, long offset, byte[] key, byte[] value,
                             List<Header> headers, long sendTimeMs, long receiveTimeMs) {
    public ConsumerRecord {
        Objects.requireNonNull(topic, "topic");
        headers = List.copyOf(headers);
    }

    public TopicPartition topicPartition() {
        return new TopicPartition(topic, partition);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof ConsumerRecord r && topic.equals(r.topic) && partition == r.partition
                && offset == r.offset && Arrays.equals(key, r.key) && Arrays.equals(value, r.value)
                && headers.equals(r.headers) && sendTimeMs == r.sendTimeMs && receiveTimeMs == r.receiveTimeMs;
    }

    @Override
    public int hashCode() {
        return Objects.hash(topic, partition, offset, Arrays.hashCode(key), Arrays.hashCode(value), headers,
                sendTimeMs, receiveTimeMs);
    }

    @Override
    public String toString() {
        return "ConsumerRecord[" + topic + "-" + partition + "@" + offset + ", key=" + Arrays.toString(key)
                + ", value=" + (value == null ? "null" : value.length + " bytes") + ", headers=" + headers
                + ", sendTimeMs=" + sendTimeMs + ", receiveTimeMs=" + receiveTimeMs + "]";
    }
}
