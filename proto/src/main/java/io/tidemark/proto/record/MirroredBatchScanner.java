package io.tidemark.proto.record;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import static io.tidemark.proto.record.RecordBatchFormat.*;

/**
 * Reads the origin of a mirrored batch ({@link RecordBatchFormat#ATTRIBUTE_MIRRORED}) straight from its bytes: the
 * origin partition its records name in their {@link ProvenanceHeaders} and the first and last origin offset, after
 * checking that every record names the same origin partition and that origin offsets strictly increase (they may
 * skip: records the mirror did not copy). The broker calls it on every mirrored batch it appends, and on the
 * mirrored batches of a log's tail when it rebuilds its origin offsets.
 *
 * <p>Works on a batch that passed {@link RecordBatchValidator}. Walks the records once with a reusable cursor and
 * compares header names as bytes; it allocates only the origin of the first record.
 *
 * <p>Not thread-safe: each log owns one and uses it under its append lock.
 */
public final class MirroredBatchScanner {
    private static final byte[] CLUSTER = utf8(ProvenanceHeaders.ORIGIN_CLUSTER);
    private static final byte[] TOPIC = utf8(ProvenanceHeaders.ORIGIN_TOPIC);
    private static final byte[] PARTITION = utf8(ProvenanceHeaders.ORIGIN_PARTITION);
    private static final byte[] OFFSET = utf8(ProvenanceHeaders.ORIGIN_OFFSET);
    private static final int FOUND_ALL = 0b1111;

    private final RecordCursor cursor = new RecordCursor();
    // Where the current record's origin values lie in the buffer, and which were found.
    private int clusterAt;
    private int clusterLength;
    private int topicAt;
    private int topicLength;
    private int partition;
    private long offset;
    private int found;

    /** A mirrored batch's origin partition and the origin offsets of its first and last record. */
    public record OriginRange(OriginPartition origin, long firstOriginOffset, long lastOriginOffset) {
    }

    /**
     * The origin range of the mirrored batch at {@code position}.
     *
     * @throws TidemarkException CORRUPT_BATCH when a record lacks provenance, names another origin partition than
     *                           the first record, or does not increase the origin offset
     */
    public OriginRange scan(ByteBuffer buffer, int position) {
        int end = position + totalSize(buffer, position);
        int next = position + RECORDS_OFFSET;
        int count = recordCount(buffer, position);
        OriginPartition origin = null;
        int firstClusterAt = 0;
        int firstClusterLength = 0;
        int firstTopicAt = 0;
        int firstTopicLength = 0;
        long first = -1;
        long previous = -1;
        for (int i = 0; i < count; i++) {
            next = cursor.openRecord(buffer, next, end);
            readOrigin(buffer, i, count);
            if (i == 0) {
                origin = firstOrigin(buffer, count);
                firstClusterAt = clusterAt;
                firstClusterLength = clusterLength;
                firstTopicAt = topicAt;
                firstTopicLength = topicLength;
                first = offset;
            } else if (partition != origin.partition()
                    || !sameBytes(buffer, clusterAt, clusterLength, firstClusterAt, firstClusterLength)
                    || !sameBytes(buffer, topicAt, topicLength, firstTopicAt, firstTopicLength)) {
                throw corrupt("record " + i + " of " + count + " names another origin partition than record 0 ("
                        + origin + "); a mirrored batch copies one origin partition");
            } else if (offset <= previous) {
                throw corrupt("record " + i + " of " + count + " has origin offset " + offset + ", not above the "
                        + "previous record's " + previous + "; origin offsets must increase in a mirrored batch");
            }
            previous = offset;
        }
        return new OriginRange(origin, first, previous);
    }

    private OriginPartition firstOrigin(ByteBuffer buffer, int count) {
        try {
            return new OriginPartition(string(buffer, clusterAt, clusterLength), string(buffer, topicAt, topicLength),
                    partition);
        } catch (IllegalArgumentException e) {
            throw corrupt("record 0 of " + count + ": " + e.getMessage());
        }
    }

    /** Reads the record the cursor is on up to its headers and notes where its origin values are. */
    private void readOrigin(ByteBuffer buffer, int record, int count) {
        try {
            cursor.readUnsignedInt();
            cursor.readSignedLong();
            cursor.skipNullableBytes("key");
            cursor.skipNullableBytes("value");
            found = 0;
            int headers = cursor.readUnsignedInt();
            for (int h = 0; h < headers; h++) {
                int nameLength = cursor.skipBytes("header name");
                int nameAt = cursor.position() - nameLength;
                int valueLength = cursor.skipBytes("header value");
                int valueAt = cursor.position() - valueLength;
                noteHeader(buffer, nameAt, nameLength, valueAt, valueLength);
            }
        } catch (RecordFormatException e) {
            throw corrupt("record " + record + " of " + count + ": " + e.getMessage());
        }
        if (found != FOUND_ALL) {
            throw corrupt("record " + record + " of " + count + " lacks provenance headers: a mirrored batch's "
                    + "records carry " + ProvenanceHeaders.ORIGIN_CLUSTER + ", " + ProvenanceHeaders.ORIGIN_TOPIC
                    + ", " + ProvenanceHeaders.ORIGIN_PARTITION + " (4 bytes) and " + ProvenanceHeaders.ORIGIN_OFFSET
                    + " (8 bytes, not negative)");
        }
    }

    private void noteHeader(ByteBuffer buffer, int nameAt, int nameLength, int valueAt, int valueLength) {
        if (nameIs(buffer, nameAt, nameLength, CLUSTER)) {
            clusterAt = valueAt;
            clusterLength = valueLength;
            found |= 1;
        } else if (nameIs(buffer, nameAt, nameLength, TOPIC)) {
            topicAt = valueAt;
            topicLength = valueLength;
            found |= 2;
        } else if (nameIs(buffer, nameAt, nameLength, PARTITION) && valueLength == ProvenanceHeaders.PARTITION_BYTES
                && buffer.getInt(valueAt) >= 0) {
            partition = buffer.getInt(valueAt);
            found |= 4;
        } else if (nameIs(buffer, nameAt, nameLength, OFFSET) && valueLength == ProvenanceHeaders.OFFSET_BYTES
                && buffer.getLong(valueAt) >= 0) {
            offset = buffer.getLong(valueAt);
            found |= 8;
        }
    }

    private static boolean nameIs(ByteBuffer buffer, int at, int length, byte[] name) {
        if (length != name.length) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            if (buffer.get(at + i) != name[i]) {
                return false;
            }
        }
        return true;
    }

    private static boolean sameBytes(ByteBuffer buffer, int at, int length, int otherAt, int otherLength) {
        if (length != otherLength) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            if (buffer.get(at + i) != buffer.get(otherAt + i)) {
                return false;
            }
        }
        return true;
    }

    private static String string(ByteBuffer buffer, int at, int length) {
        byte[] bytes = new byte[length];
        buffer.get(at, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static TidemarkException corrupt(String detail) {
        return new TidemarkException(ErrorCode.CORRUPT_BATCH, "corrupt mirrored batch: " + detail);
    }
}
