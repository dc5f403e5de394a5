package io.tidemark.core.group;

import com.google.protobuf.InvalidProtocolBufferException;
import io.tidemark.proto.v1.ConsumerGroupState;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The key and value of a group state record in the internal topic {@code __group_offsets}: one record per consumer
 * group, written by its coordinator whenever the group's membership changes, so the next coordinator carries on with
 * the same members, epochs and assignment. The latest record for a key wins; a null value (a tombstone) means the
 * group is gone. Beside the offset commits ({@link OffsetCommitFormat}): the first two bytes of a key tell which it is.
 *
 * <h2>Key (big-endian)</h2>
 * <pre>
 * kind        int16   2 (an offset commit's key starts with 1)
 * group       int16 length, then UTF-8 bytes
 * </pre>
 * <h2>Value</h2>
 * <pre>
 * version     int16   1 (big-endian)
 * state       the rest: a protobuf ConsumerGroupState (proto/tidemark/v1/group_state.proto)
 * </pre>
 */
final class GroupStateFormat {
    static final short KEY_KIND = 2;
    private static final short VERSION = 1;
    private static final int GROUP_LENGTH_OFFSET = 2;
    private static final int GROUP_OFFSET = GROUP_LENGTH_OFFSET + 2;

    private GroupStateFormat() {
    }

    /** Whether {@code key} is a group state record's (and not an offset commit's). */
    static boolean isGroupStateKey(byte[] key) {
        return key != null && key.length >= 2 && ByteBuffer.wrap(key).getShort() == KEY_KIND;
    }

    static byte[] key(String group) {
        byte[] groupBytes = group.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(2 + 2 + groupBytes.length).putShort(KEY_KIND).putShort((short) groupBytes.length)
                .put(groupBytes).array();
    }

    static byte[] value(ConsumerGroupState state) {
        byte[] bytes = state.toByteArray();
        return ByteBuffer.allocate(2 + bytes.length).putShort(VERSION).put(bytes).array();
    }

    /** @throws IllegalStateException when the key is shorter than the group its length announces */
    static String readGroup(byte[] key) {
        if (key.length < GROUP_OFFSET) {
            throw new IllegalStateException("group state key of " + key.length
                    + " bytes is shorter than its kind and length");
        }
        int length = ByteBuffer.wrap(key).getShort(GROUP_LENGTH_OFFSET);
        if (length < 0 || length > key.length - GROUP_OFFSET) {
            throw new IllegalStateException("group state key of " + key.length + " bytes announces a group of " + length
                    + " bytes");
        }
        return new String(key, GROUP_OFFSET, length, StandardCharsets.UTF_8);
    }

    /** @throws IllegalStateException when the value is of another version or does not parse */
    static ConsumerGroupState readValue(byte[] value) {
        if (value.length < 2) {
            throw new IllegalStateException("group state value of " + value.length + " bytes has no version");
        }
        ByteBuffer buffer = ByteBuffer.wrap(value);
        short version = buffer.getShort();
        if (version != VERSION) {
            throw new IllegalStateException("group state value has version " + version + "; this broker reads version "
                    + VERSION);
        }
        try {
            return ConsumerGroupState.parseFrom(buffer);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("group state value does not parse: " + e.getMessage(), e);
        }
    }
}
