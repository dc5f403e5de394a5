package io.tidemark.proto.record;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchValidator.SendTimeWindow;
import io.tidemark.proto.v1.ErrorCode;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import static io.tidemark.proto.record.RecordBatchFormat.*;

/**
 * Reads the origin of a mirrored batch ({@link RecordBatchFormat#ATTRIBUTE_MIRRORED}) straight from its bytes: the
 * origin partition its records name in their provenance header ({@link ProvenanceHeaders}, {@link ProvenanceFormat})
 * and the first and last origin offset, after checking that every record carries a well-formed provenance value,
 * that every record names the same origin partition (cluster, topic, topic id and partition: copies of two
 * incarnations of a topic never share a batch) and that origin offsets strictly increase (they may skip:
 * records the mirror did not copy). It also counts the bytes the provenance headers add to the batch, and can hold
 * each record's SendTime to a window around its origin ReceiveTime. The broker calls it on every mirrored batch it
 * appends, and on the mirrored batches of a log's tail when it rebuilds its origin offsets.
 *
 * <p>Works on a batch that passed {@link RecordBatchValidator}. Walks the records once with a reusable cursor,
 * compares header names as bytes and reads provenance values in place with a reusable {@link ProvenanceDecoder}; it
 * allocates only the origin of the first record and the range it returns.
 *
 * <p>Not thread-safe: each log owns one and uses it under its append lock.
 */
public final class MirroredBatchScanner {
    // Read with absolute gets only, which leave it unchanged, so one buffer serves every scanner.
    private static final ByteBuffer NAME = ByteBuffer.wrap(ProvenanceHeaders.NAME.getBytes(StandardCharsets.UTF_8))
            .asReadOnlyBuffer();

    private final RecordCursor cursor = new RecordCursor();
    private final ProvenanceDecoder provenance = new ProvenanceDecoder();
    // Of the record being read: its headers, and the bytes and count of those named tidemark.origin.
    private int headerCount;
    private int provenanceHeaderBytes;
    private int provenanceHeaderCount;

    /**
     * A mirrored batch's origin partition and the origin offsets of its first and last record.
     *
     * @param provenanceBytes what the records' {@value ProvenanceHeaders#NAME} headers add to the batch's size: the
     *                        headers (names, values and their lengths) and the bytes they add to each record's
     *                        length and header count varints. The batch less these is its records as the origin
     *                        held them, which is what max.batch.bytes holds a mirrored batch to.
     */
    public record OriginRange(OriginPartition origin, long firstOriginOffset, long lastOriginOffset,
                              int provenanceBytes) {
    }

    /** The origin range of the mirrored batch at {@code position}, any SendTime allowed. */
    public OriginRange scan(ByteBuffer buffer, int position) {
        return scan(buffer, position, SendTimeWindow.UNBOUNDED);
    }

    /**
     * The origin range of the mirrored batch at {@code position}, each record's SendTime held to {@code window}'s
     * limits around its origin ReceiveTime ({@link SendTimeWindow#checkAgainstOrigin}; the window's own ReceiveTime
     * is not used).
     *
     * @throws TidemarkException CORRUPT_BATCH when a record lacks provenance or carries a malformed one, names
     *                           another origin partition than the first record, or does not increase the origin
     *                           offset; INVALID_TIMESTAMP when a record's SendTime is outside the window around its
     *                           origin ReceiveTime
     */
    public OriginRange scan(ByteBuffer buffer, int position, SendTimeWindow window) {
        int end = position + totalSize(buffer, position);
        int next = position + RECORDS_OFFSET;
        int count = recordCount(buffer, position);
        long firstSendTime = firstSendTime(buffer, position);
        OriginPartition origin = null;
        int firstClusterAt = 0;
        int firstClusterLength = 0;
        int firstTopicAt = 0;
        int firstTopicLength = 0;
        int firstTopicIdAt = 0;
        long first = -1;
        long previous = -1;
        int provenanceBytes = 0;
        for (int i = 0; i < count; i++) {
            int recordStart = next;
            next = cursor.openRecord(buffer, next, end);
            int recordLength = next - cursor.position();
            long sendTime = readProvenance(buffer, firstSendTime, i, count);
            long offset = provenance.offset();
            if (i == 0) {
                origin = provenance.origin();
                firstClusterAt = provenance.clusterAt();
                firstClusterLength = provenance.clusterLength();
                firstTopicAt = provenance.topicAt();
                firstTopicLength = provenance.topicLength();
                firstTopicIdAt = provenance.topicIdAt();
                first = offset;
            } else if (provenance.partition() != origin.partition()
                    || !sameBytes(buffer, provenance.clusterAt(), provenance.clusterLength(), buffer, firstClusterAt,
                    firstClusterLength)
                    || !sameBytes(buffer, provenance.topicAt(), provenance.topicLength(), buffer, firstTopicAt,
                    firstTopicLength)
                    || !sameBytes(buffer, provenance.topicIdAt(), TopicIds.LENGTH, buffer, firstTopicIdAt,
                    TopicIds.LENGTH)) {
                throw corrupt("record " + i + " of " + count + " names another origin partition than record 0 ("
                        + origin + "); a mirrored batch copies one origin partition");
            } else if (offset <= previous) {
                throw corrupt("record " + i + " of " + count + " has origin offset " + offset + ", not above the "
                        + "previous record's " + previous + "; origin offsets must increase in a mirrored batch");
            }
            window.checkAgainstOrigin(i, sendTime, provenance.receiveTimeMs());
            provenanceBytes += (next - recordStart) - sizeWithoutProvenance(recordLength);
            previous = offset;
        }
        return new OriginRange(origin, first, previous, provenanceBytes);
    }

    /**
     * The bytes a record of {@code recordLength} (its length varint excluded) would take without its provenance
     * headers, length varint included: its header count varint may shrink with them.
     */
    private int sizeWithoutProvenance(int recordLength) {
        int length = recordLength - provenanceHeaderBytes - Varints.sizeOfUnsignedInt(headerCount)
                + Varints.sizeOfUnsignedInt(headerCount - provenanceHeaderCount);
        return Varints.sizeOfUnsignedInt(length) + length;
    }

    /**
     * Reads the record the cursor is on up to the end of its headers, decodes its last provenance header and counts
     * the bytes of all of them; returns the record's SendTime.
     */
    private long readProvenance(ByteBuffer buffer, long firstSendTime, int record, int count) {
        try {
            cursor.readUnsignedInt();
            long sendTime = firstSendTime + cursor.readSignedLong();
            cursor.skipNullableBytes("key");
            cursor.skipNullableBytes("value");
            int valueAt = -1;
            int valueLength = 0;
            headerCount = cursor.readUnsignedInt();
            provenanceHeaderBytes = 0;
            provenanceHeaderCount = 0;
            for (int h = 0; h < headerCount; h++) {
                int headerAt = cursor.position();
                int nameLength = cursor.skipBytes("header name");
                int nameAt = cursor.position() - nameLength;
                int length = cursor.skipBytes("header value");
                if (sameBytes(buffer, nameAt, nameLength, NAME, 0, NAME.capacity())) {
                    valueAt = cursor.position() - length;
                    valueLength = length;
                    provenanceHeaderBytes += cursor.position() - headerAt;
                    provenanceHeaderCount++;
                }
            }
            if (valueAt < 0) {
                throw corrupt("record " + record + " of " + count + " lacks the " + ProvenanceHeaders.NAME
                        + " header: every record of a mirrored batch carries its provenance");
            }
            provenance.wrap(buffer, valueAt, valueLength);
            return sendTime;
        } catch (RecordFormatException e) {
            throw corrupt("record " + record + " of " + count + ": " + e.getMessage());
        }
    }

    private static boolean sameBytes(ByteBuffer buffer, int at, int length, ByteBuffer other, int otherAt,
                                     int otherLength) {
        if (length != otherLength) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            if (buffer.get(at + i) != other.get(otherAt + i)) {
                return false;
            }
        }
        return true;
    }

    private static TidemarkException corrupt(String detail) {
        return new TidemarkException(ErrorCode.CORRUPT_BATCH, "corrupt mirrored batch: " + detail);
    }
}
