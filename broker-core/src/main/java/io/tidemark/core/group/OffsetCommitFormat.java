package io.tidemark.core.group;

import io.tidemark.core.partition.TopicPartition;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The key and value of an offset commit record in the internal topic {@code __group_offsets}: one record per
 * committed partition. The latest record for a key wins when the topic is replayed at start; a record with a null
 * value (a tombstone) deletes the group's offset of the partition.
 *
 * <h2>Key (big-endian)</h2>
 * <pre>
 * version     int16   1
 * group       int16 length, then UTF-8 bytes
 * topic       int16 length, then UTF-8 bytes
 * partition   int32
 * </pre>
 * <h2>Value (big-endian)</h2>
 * <pre>
 * version         int16   1
 * offset          int64   the next offset the group reads
 * commit time     int64   broker clock, ms since the epoch
 * metadata        int32 length, then UTF-8 bytes
 * </pre>
 * The record's batch carries the CRC; a version other than 1 is refused when the topic is replayed.
 */
final class OffsetCommitFormat {
    private static final short VERSION = 1;

    private OffsetCommitFormat() {
    }

    record Key(String group, TopicPartition partition) {
    }

    record Value(long offset, long commitTimeMs, String metadata) {
    }

    static byte[] key(String group, TopicPartition partition) {
        byte[] groupBytes = group.getBytes(StandardCharsets.UTF_8);
        byte[] topicBytes = partition.topic().getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(2 + 2 + groupBytes.length + 2 + topicBytes.length + 4).putShort(VERSION)
                .putShort((short) groupBytes.length).put(groupBytes)
                .putShort((short) topicBytes.length).put(topicBytes)
                .putInt(partition.partition()).array();
    }

    static byte[] value(Value value) {
        byte[] metadata = value.metadata().getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(2 + 8 + 8 + 4 + metadata.length).putShort(VERSION).putLong(value.offset())
                .putLong(value.commitTimeMs()).putInt(metadata.length).put(metadata).array();
    }

    /** @throws IllegalStateException when the bytes are not a key of version 1, naming what is wrong */
    static Key readKey(byte[] bytes) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        try {
            checkVersion(buffer.getShort(), "key");
            String group = readString(buffer, buffer.getShort(), "key");
            String topic = readString(buffer, buffer.getShort(), "key");
            return new Key(group, new TopicPartition(topic, buffer.getInt()));
        } catch (BufferUnderflowException e) {
            throw truncated("key", bytes);
        }
    }

    /** @throws IllegalStateException when the bytes are not a value of version 1, naming what is wrong */
    static Value readValue(byte[] bytes) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        try {
            checkVersion(buffer.getShort(), "value");
            long offset = buffer.getLong();
            long commitTime = buffer.getLong();
            return new Value(offset, commitTime, readString(buffer, buffer.getInt(), "value"));
        } catch (BufferUnderflowException e) {
            throw truncated("value", bytes);
        }
    }

    private static IllegalStateException truncated(String what, byte[] bytes) {
        return new IllegalStateException("offset commit " + what + " of " + bytes.length
                + " bytes ends inside a field");
    }

    private static void checkVersion(short version, String what) {
        if (version != VERSION) {
            throw new IllegalStateException("offset commit " + what + " has version " + version
                    + "; this broker reads version " + VERSION);
        }
    }

    /** Reads a string of {@code length} bytes, after checking they are there: the length is read from the record. */
    private static String readString(ByteBuffer buffer, int length, String what) {
        if (length < 0 || length > buffer.remaining()) {
            throw new IllegalStateException("offset commit " + what + " holds a string of " + length + " bytes where "
                    + buffer.remaining() + " are left");
        }
        byte[] bytes = new byte[length];
        buffer.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
