package io.tidemark.proto.record;

import io.tidemark.proto.record.ProvenanceHeaders.Provenance;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a provenance value ({@link ProvenanceFormat}) in place: {@link #wrap} checks all of it and notes where its
 * fields lie, allocating nothing unless it throws, so {@link MirroredBatchScanner} can check every record of a batch.
 * {@link #origin()} and {@link #provenance()} then build objects for callers that want them.
 *
 * <p>Not thread-safe: each scanner owns one, and {@link ProvenanceFormat#decode} makes its own.
 */
final class ProvenanceDecoder {
    private static final String EARLIER_CLUSTER = "earlier cluster";

    private final RecordCursor cursor = new RecordCursor("value");
    private ByteBuffer buffer;
    private int end;
    private int clusterAt;
    private int clusterLength;
    private int topicAt;
    private int topicLength;
    private int topicIdAt;
    private int partition;
    private long offset;
    private long receiveTimeMs;
    private int earlierCount;
    private int earlierAt;
    // The field being read, for the message when it is wrong; the earlier cluster's index when it is one of those.
    private String field;
    private int earlierIndex;

    /**
     * Checks the value of {@code length} bytes at {@code at} and notes where its fields are.
     *
     * @throws RecordFormatException naming the value, its size, the field that is wrong and why
     */
    void wrap(ByteBuffer buffer, int at, int length) {
        this.buffer = buffer;
        this.end = at + length;
        try {
            readVersion(at, length);
            readOrigin();
            readEarlierClusters();
        } catch (RecordFormatException e) {
            String where = field.equals(EARLIER_CLUSTER) ? field + " " + earlierIndex + " of " + earlierCount : field;
            throw new RecordFormatException("malformed " + ProvenanceHeaders.NAME + " value (" + length + " bytes): "
                    + where + ": " + e.getMessage());
        }
    }

    private void readVersion(int at, int length) {
        field = "version";
        if (length < ProvenanceFormat.VERSION_LENGTH) {
            throw new RecordFormatException("the value is empty");
        }
        byte version = buffer.get(at);
        if (version == ProvenanceFormat.VERSION_1) {
            throw new RecordFormatException(version + " is not read any more: it names no topic id, and copies "
                    + "written before topic ids are not migrated; this reader knows version "
                    + ProvenanceFormat.VERSION_2);
        }
        if (version != ProvenanceFormat.VERSION_2) {
            throw new RecordFormatException(version + " is not known; this reader knows version "
                    + ProvenanceFormat.VERSION_2);
        }
        cursor.reset(buffer, at + ProvenanceFormat.VERSION_LENGTH, end);
    }

    private void readOrigin() {
        field = "origin cluster";
        clusterLength = cursor.skipBytes("name");
        clusterAt = cursor.position() - clusterLength;
        checkClusterName(clusterAt, clusterLength);
        field = "origin topic";
        topicLength = cursor.skipBytes("name");
        topicAt = cursor.position() - topicLength;
        if (topicLength == 0) {
            throw new RecordFormatException("the name is empty");
        }
        field = "origin topic id";
        topicIdAt = cursor.skipFixed(TopicIds.LENGTH, "id");
        field = "origin partition";
        partition = cursor.readUnsignedInt();
        field = "origin offset";
        offset = cursor.readUnsignedLong();
        field = "origin ReceiveTime";
        receiveTimeMs = cursor.readUnsignedLong();
    }

    private void readEarlierClusters() {
        field = "earlier cluster count";
        earlierCount = cursor.readUnsignedInt();
        earlierAt = cursor.position();
        field = EARLIER_CLUSTER;
        for (earlierIndex = 0; earlierIndex < earlierCount; earlierIndex++) {
            int length = cursor.skipBytes("name");
            checkClusterName(cursor.position() - length, length);
        }
        field = "after the path";
        if (cursor.position() != end) {
            throw new RecordFormatException((end - cursor.position()) + " bytes more; version "
                    + ProvenanceFormat.VERSION_2 + " ends with the path");
        }
    }

    private void checkClusterName(int at, int length) {
        boolean valid = length >= 1 && length <= OriginPartition.CLUSTER_NAME_LENGTH_MAX;
        for (int i = 0; valid && i < length; i++) {
            valid = OriginPartition.isClusterNameCharacter(buffer.get(at + i));
        }
        if (!valid) {
            throw new RecordFormatException(OriginPartition.clusterNameRefusal(string(at, length)));
        }
    }

    int clusterAt() {
        return clusterAt;
    }

    int clusterLength() {
        return clusterLength;
    }

    int topicAt() {
        return topicAt;
    }

    int topicLength() {
        return topicLength;
    }

    /** Where the origin topic's 16-byte id starts. */
    int topicIdAt() {
        return topicIdAt;
    }

    int partition() {
        return partition;
    }

    long offset() {
        return offset;
    }

    long receiveTimeMs() {
        return receiveTimeMs;
    }

    /** The origin partition of the value last wrapped. */
    OriginPartition origin() {
        return new OriginPartition(string(clusterAt, clusterLength), string(topicAt, topicLength),
                TopicIds.read(buffer, topicIdAt), partition);
    }

    /** The provenance of the value last wrapped. */
    Provenance provenance() {
        OriginPartition origin = origin();
        List<String> path = new ArrayList<>(earlierCount + 1);
        cursor.reset(buffer, earlierAt, end);
        for (int i = 0; i < earlierCount; i++) {
            int length = cursor.skipBytes("name");
            path.add(string(cursor.position() - length, length));
        }
        path.add(origin.cluster());
        return new Provenance(origin, offset, receiveTimeMs, path);
    }

    private String string(int at, int length) {
        byte[] bytes = new byte[length];
        buffer.get(at, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
