package io.tidemark.proto.record;

import io.tidemark.proto.record.ProvenanceHeaders.Provenance;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The value of the provenance header {@value ProvenanceHeaders#NAME}: where a copied record came from, in few bytes.
 * A mirror adds one to every record it copies, so its size is paid on every copy (MirrorMaker 2 adds nothing per
 * record); the broker reads it from every record of a mirrored batch ({@link MirroredBatchScanner}, through
 * {@link ProvenanceDecoder}, in place).
 *
 * <h2>Layout, version 2</h2>
 * Fields follow one another without padding or alignment. A varint or varlong is unsigned LEB128 ({@link Varints}):
 * 7 bits a byte, least significant group first, the high bit set on every byte but the last. Every number here is
 * never negative, so the zigzag of signed fields would only cost a bit.
 * <pre>
 * Version            int8      {@value #VERSION_2}
 * Cluster Length     varint    1 to 64
 * Cluster            bytes     the origin cluster's name, ASCII ({@link OriginPartition#CLUSTER_NAME_RULE})
 * Topic Length       varint    at least 1
 * Topic              bytes     the origin topic, UTF-8
 * Topic Id           16 bytes  the origin topic's id, big-endian, most significant half first ({@link TopicIds})
 * Partition          varint    the origin partition, at most 2^31 - 1
 * Offset             varlong   the record's offset in the origin partition, at most 2^63 - 1
 * ReceiveTime        varlong   its ReceiveTime there, ms since the epoch, at most 2^63 - 1
 * Earlier Count      varint    how many clusters the record crossed before the origin cluster
 * Earlier Clusters   Earlier Count times, oldest first:
 *   Length           varint    1 to 64
 *   Name             bytes     a cluster's name, ASCII
 * </pre>
 * The value ends with the last earlier cluster (or with Earlier Count when it is 0); a reader refuses bytes after it.
 *
 * <ul>
 *   <li><b>Version</b> comes first so the format can change: a reader refuses a version it does not know rather
 *       than misread it, and a later version may change everything after this byte. Version 1, the same without
 *       Topic Id, is refused too: it cannot tell a topic from one deleted and created again under its name, and
 *       Tidemark 0.1.0-SNAPSHOT migrates no copies written before topic ids.</li>
 *   <li><b>Topic Id</b>: a topic deleted and created again under the same name starts its offsets again; without the
 *       id a mirror would resume the new topic after the old one's last copied offset (dropping its first records,
 *       or having them refused as held) and its copies could not be told from the old topic's. With it, each
 *       incarnation is its own origin. It is the whole id, as the API shows it ({@code tidemark topics describe}),
 *       at a fixed 16 bytes: random bits do not shrink as a varint.</li>
 *   <li><b>Path</b>: the clusters crossed, oldest first, are the Earlier Clusters followed by the origin cluster.
 *       The origin cluster is the path's last element by definition, so it is written once; no value can hold a
 *       path that ends with another cluster.</li>
 *   <li><b>Order</b>: cluster, topic, topic id, partition and offset come first because the broker reads them from
 *       every record of a mirrored batch; it checks the rest as well, so a stored copy always decodes.</li>
 *   <li><b>Sizes</b>: partition and offset are varints because most are small (an offset below 2^21, two million,
 *       takes 3 bytes); a ReceiveTime between 2^35 ms (1971) and 2^42 ms (2109) takes 6 bytes, not 8. A name's
 *       length takes 1 byte up to 127 bytes, so every cluster name's length does.</li>
 *   <li><b>No CRC</b>: the value lies inside a record, which its batch's CRC covers ({@link RecordBatchFormat}); after
 *       a crash it is truncated or kept with its batch.</li>
 * </ul>
 *
 * <h2>Example</h2>
 * A record copied from cluster {@code A}, topic {@code orders} with id {@code 0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95},
 * partition 0, offset 1,000,000, stamped there at 2026-01-01T00:00:00Z (1,767,225,600,000 ms), has the path
 * {@code [A]} and this value of 37 bytes:
 * <pre>
 * 02                                  version 2
 * 01 41                               cluster "A"
 * 06 6f7264657273                     topic "orders"
 * 0e4f7c2a5b1d4e8f 9a3c6d2b1f0a7e95   topic id 0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95
 * 00                                  partition 0
 * c0 84 3d                            offset 1,000,000
 * 80 d0 ea b6 b7 33                   ReceiveTime 1,767,225,600,000
 * 00                                  no earlier cluster: the path is [A]
 * </pre>
 * Copied on from {@code B}, the record's value there names B's topic, its id, partition, offset and ReceiveTime, and
 * ends {@code 01 01 41}: one earlier cluster, "A", so the path is {@code [A, B]}. With the header's name (15 bytes) and
 * the two lengths of a header, the one-hop value above takes 54 bytes of a record.
 *
 * <p>Stateless.
 */
public final class ProvenanceFormat {
    /** The version before topic ids, which readers refuse. */
    static final byte VERSION_1 = 1;
    public static final byte VERSION_2 = 2;
    static final int VERSION_LENGTH = 1;

    private ProvenanceFormat() {
    }

    /** The value of {@code provenance}, version {@value #VERSION_2}. */
    public static byte[] encode(Provenance provenance) {
        OriginPartition origin = provenance.origin();
        byte[] cluster = ascii(origin.cluster());
        byte[] topic = origin.topic().getBytes(StandardCharsets.UTF_8);
        List<String> earlier = provenance.path().subList(0, provenance.path().size() - 1);
        int size = VERSION_LENGTH + bytesSize(cluster.length) + bytesSize(topic.length) + TopicIds.LENGTH
                + Varints.sizeOfUnsignedInt(origin.partition()) + Varints.sizeOfUnsignedLong(provenance.originOffset())
                + Varints.sizeOfUnsignedLong(provenance.originReceiveTimeMs())
                + Varints.sizeOfUnsignedInt(earlier.size());
        for (String name : earlier) {
            size += bytesSize(name.length());
        }
        ByteBuffer buffer = ByteBuffer.allocate(size).put(VERSION_2);
        writeBytes(buffer, cluster);
        writeBytes(buffer, topic);
        TopicIds.write(buffer, buffer.position(), origin.topicId());
        buffer.position(buffer.position() + TopicIds.LENGTH);
        Varints.writeUnsignedInt(buffer, origin.partition());
        Varints.writeUnsignedLong(buffer, provenance.originOffset());
        Varints.writeUnsignedLong(buffer, provenance.originReceiveTimeMs());
        Varints.writeUnsignedInt(buffer, earlier.size());
        for (String name : earlier) {
            writeBytes(buffer, ascii(name));
        }
        if (buffer.hasRemaining()) {
            throw new IllegalStateException("provenance value of " + size + " bytes has " + buffer.remaining()
                    + " bytes left after writing " + provenance);
        }
        return buffer.array();
    }

    /**
     * The provenance a value holds.
     *
     * @throws IllegalArgumentException naming the field that is wrong: a value too short, of another version (also
     *                                  version 1, written before topic ids), with a name that is not a cluster name,
     *                                  an empty topic, or bytes after the path
     */
    public static Provenance decode(byte[] value) {
        ProvenanceDecoder decoder = new ProvenanceDecoder();
        try {
            decoder.wrap(ByteBuffer.wrap(value), 0, value.length);
        } catch (RecordFormatException e) {
            throw new IllegalArgumentException(e.getMessage());
        }
        return decoder.provenance();
    }

    /** Cluster names are ASCII ({@link OriginPartition#CLUSTER_NAME_RULE}): one byte a character. */
    private static byte[] ascii(String clusterName) {
        return clusterName.getBytes(StandardCharsets.US_ASCII);
    }

    private static int bytesSize(int length) {
        return Varints.sizeOfUnsignedInt(length) + length;
    }

    private static void writeBytes(ByteBuffer buffer, byte[] bytes) {
        Varints.writeUnsignedInt(buffer, bytes.length);
        buffer.put(bytes);
    }
}
