package io.tidemark.proto.record;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The provenance a mirror adds to every record it copies: record headers with reserved names. A copied record keeps
 * its own headers first, in their order, then gets these six, in this order:
 *
 * <pre>
 * name                          value
 * tidemark.origin.cluster       UTF-8: the name of the cluster the record was copied from (OriginPartition rules)
 * tidemark.origin.topic         UTF-8: its topic there
 * tidemark.origin.partition     4 bytes: its partition there, int32 big-endian
 * tidemark.origin.offset        8 bytes: its offset there, int64 big-endian
 * tidemark.origin.receive-time  8 bytes: its ReceiveTime there, ms since the epoch, int64 big-endian
 * tidemark.path                 UTF-8: the names of the clusters the record crossed, oldest first, joined by ','
 *                               (cluster names never hold a ','); the last is the origin cluster
 * </pre>
 *
 * <p>"Origin" is the last hop: a record copied A to B to C carries, on C, B's topic, partition, offset and ReceiveTime
 * and the path {@code A,B}. That is what exactly-once copying needs (the mirror into C reads B's partition in B's
 * offsets) and what the latency of the hop is measured on; SendTime is the producer's time end to end, and the
 * path keeps the clusters. Copying a record that already carries provenance replaces the five origin headers and
 * extends the path; no other header whose name starts with {@code tidemark.origin.} or is {@code tidemark.path}
 * survives a copy.
 *
 * <p>The loop rule: a record is never copied into a cluster on its path ({@link #crossed}). So A to B and B to A can
 * run together over the same topic names: what B got from A has path {@code A} and is not copied back.
 *
 * <p>Records of a mirrored batch ({@link RecordBatchFormat#ATTRIBUTE_MIRRORED}) must carry these headers; the broker
 * reads them with {@link MirroredBatchScanner}, without decoding the records.
 *
 * <p>Stateless.
 */
public final class ProvenanceHeaders {
    public static final String ORIGIN_PREFIX = "tidemark.origin.";
    public static final String ORIGIN_CLUSTER = ORIGIN_PREFIX + "cluster";
    public static final String ORIGIN_TOPIC = ORIGIN_PREFIX + "topic";
    public static final String ORIGIN_PARTITION = ORIGIN_PREFIX + "partition";
    public static final String ORIGIN_OFFSET = ORIGIN_PREFIX + "offset";
    public static final String ORIGIN_RECEIVE_TIME = ORIGIN_PREFIX + "receive-time";
    public static final String PATH = "tidemark.path";
    static final int PARTITION_BYTES = 4;
    static final int OFFSET_BYTES = 8;
    static final int RECEIVE_TIME_BYTES = 8;
    private static final String PATH_SEPARATOR = ",";

    private ProvenanceHeaders() {
    }

    /**
     * Where a copied record came from.
     *
     * @param path the clusters crossed, oldest first, ending with the origin's cluster
     */
    public record Provenance(OriginPartition origin, long originOffset, long originReceiveTimeMs, List<String> path) {
        public Provenance {
            Objects.requireNonNull(origin, "origin");
            if (originOffset < 0) {
                throw new IllegalArgumentException("origin offset " + originOffset + " is negative");
            }
            path = List.copyOf(path);
            if (path.isEmpty() || !path.get(path.size() - 1).equals(origin.cluster())) {
                throw new IllegalArgumentException("path " + path + " does not end with the origin cluster "
                        + origin.cluster());
            }
            path.forEach(OriginPartition::checkClusterName);
        }
    }

    /** Whether the header name is one of the reserved ones, which a copy drops and replaces. */
    public static boolean reserved(String name) {
        return name.startsWith(ORIGIN_PREFIX) || name.equals(PATH);
    }

    /**
     * The headers of the copy of a record: its own headers without reserved ones, then the provenance of the copy.
     *
     * @param headers        the record's headers as read from the origin
     * @param origin         where the record is read from
     * @param originOffset   its offset there
     * @param originReceiveTimeMs its ReceiveTime there
     */
    public static List<Header> forCopy(List<Header> headers, OriginPartition origin, long originOffset,
                                       long originReceiveTimeMs) {
        List<String> path = new ArrayList<>(path(headers));
        path.add(origin.cluster());
        Provenance provenance = new Provenance(origin, originOffset, originReceiveTimeMs, path);
        List<Header> copy = new ArrayList<>(headers.size() + 6);
        for (Header header : headers) {
            if (!reserved(header.name())) {
                copy.add(header);
            }
        }
        copy.addAll(encode(provenance));
        return copy;
    }

    /** The six headers of a provenance, in their order. */
    public static List<Header> encode(Provenance provenance) {
        OriginPartition origin = provenance.origin();
        return List.of(
                new Header(ORIGIN_CLUSTER, utf8(origin.cluster())),
                new Header(ORIGIN_TOPIC, utf8(origin.topic())),
                new Header(ORIGIN_PARTITION, ByteBuffer.allocate(PARTITION_BYTES).putInt(origin.partition()).array()),
                new Header(ORIGIN_OFFSET, ByteBuffer.allocate(OFFSET_BYTES).putLong(provenance.originOffset()).array()),
                new Header(ORIGIN_RECEIVE_TIME, ByteBuffer.allocate(RECEIVE_TIME_BYTES)
                        .putLong(provenance.originReceiveTimeMs()).array()),
                new Header(PATH, utf8(String.join(PATH_SEPARATOR, provenance.path()))));
    }

    /**
     * The provenance of a record, when it carries a complete one.
     *
     * @throws IllegalArgumentException when it carries some provenance headers but not a well-formed set
     */
    public static Optional<Provenance> read(List<Header> headers) {
        byte[] cluster = last(headers, ORIGIN_CLUSTER);
        byte[] topic = last(headers, ORIGIN_TOPIC);
        byte[] partition = last(headers, ORIGIN_PARTITION);
        byte[] offset = last(headers, ORIGIN_OFFSET);
        byte[] receiveTime = last(headers, ORIGIN_RECEIVE_TIME);
        if (cluster == null && topic == null && partition == null && offset == null && receiveTime == null) {
            return Optional.empty();
        }
        if (cluster == null || topic == null || partition == null || offset == null || receiveTime == null) {
            throw new IllegalArgumentException("a record carries some provenance headers but not all five "
                    + ORIGIN_PREFIX + "* ones: " + headers);
        }
        checkLength(ORIGIN_PARTITION, partition, PARTITION_BYTES);
        checkLength(ORIGIN_OFFSET, offset, OFFSET_BYTES);
        checkLength(ORIGIN_RECEIVE_TIME, receiveTime, RECEIVE_TIME_BYTES);
        OriginPartition origin = new OriginPartition(new String(cluster, StandardCharsets.UTF_8),
                new String(topic, StandardCharsets.UTF_8), ByteBuffer.wrap(partition).getInt());
        return Optional.of(new Provenance(origin, ByteBuffer.wrap(offset).getLong(),
                ByteBuffer.wrap(receiveTime).getLong(), path(headers)));
    }

    /**
     * A header's value as text for people: the numbers of the partition, offset and receive-time headers in decimal,
     * every other value as UTF-8.
     */
    public static String displayValue(Header header) {
        byte[] value = header.value();
        return switch (header.name()) {
            case ORIGIN_PARTITION -> value.length == PARTITION_BYTES ? Integer.toString(ByteBuffer.wrap(value).getInt())
                    : utf8Text(value);
            case ORIGIN_OFFSET, ORIGIN_RECEIVE_TIME -> value.length == OFFSET_BYTES
                    ? Long.toString(ByteBuffer.wrap(value).getLong()) : utf8Text(value);
            default -> utf8Text(value);
        };
    }

    private static String utf8Text(byte[] value) {
        return new String(value, StandardCharsets.UTF_8);
    }

    /** The clusters a record crossed, oldest first; empty for a record that was never copied. */
    public static List<String> path(List<Header> headers) {
        byte[] path = last(headers, PATH);
        if (path == null || path.length == 0) {
            return List.of();
        }
        return Arrays.asList(new String(path, StandardCharsets.UTF_8).split(PATH_SEPARATOR, -1));
    }

    /** Whether the record crossed (or started in) {@code cluster}: the loop rule says not to copy it there. */
    public static boolean crossed(List<Header> headers, String cluster) {
        return path(headers).contains(cluster);
    }

    private static byte[] last(List<Header> headers, String name) {
        for (int i = headers.size() - 1; i >= 0; i--) {
            if (headers.get(i).name().equals(name)) {
                return headers.get(i).value();
            }
        }
        return null;
    }

    private static void checkLength(String name, byte[] value, int length) {
        if (value.length != length) {
            throw new IllegalArgumentException("header " + name + " has " + value.length + " bytes, not " + length);
        }
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
