package io.tidemark.replication.verify;

import io.tidemark.proto.record.Header;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchReader;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.proto.v1.RangeDigest;
import io.tidemark.proto.v1.ReadPartitionResponse;
import io.tidemark.replication.verify.PartitionVerdict.Difference;
import io.tidemark.replication.verify.PartitionVerdict.Target;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Compares one range of offsets of two replicas record by record, once their digests differ: the first offset at
 * which they differ, or how many records one holds that the other compacted away as compaction may.
 * <ul>
 *   <li>A record both hold must be the same: offset, ReceiveTime, SendTime, key, value, headers.</li>
 *   <li>A record only one holds is a difference, unless the other's range is compacted and the record is one
 *       compaction removes: a tombstone (null value; removed {@code delete.retention.ms} after it was written, a time
 *       this check does not see), or a record of a key the compacting replica holds a later record of (read on past
 *       the range, to its log end, when needed). A record without a key, or the latest of its key, is never
 *       removed.</li>
 * </ul>
 *
 * <p>Not thread-safe.
 */
final class RangeComparison {
    /** Bytes a read asks a replica for: whole batches, so a range is read in a few calls. */
    private static final int READ_BYTES = 4 << 20;
    private static final int SHOWN_BYTES_MAX = 40;

    private final ReplicaReader reader;
    private final Target target;
    private final GroupPartition partition;
    private final RecordBatchReader batches = new RecordBatchReader();

    RangeComparison(ReplicaReader reader, Target target) {
        this.reader = reader;
        this.target = target;
        this.partition = ReplicaVerifier.groupPartition(target);
    }

    /**
     * @param compactedAway records one replica holds and the other compacted away as compaction may
     * @param difference    the first offset at which they differ otherwise
     */
    record Result(long compactedAway, Optional<Difference> difference) {
    }

    /** A record only one replica holds, which the other must have compacted away. */
    private record Unmatched(Record record, int holder, int missing) {
    }

    Result compare(int reference, RangeDigest referenceRange, int node, RangeDigest nodeRange) {
        long from = referenceRange.getFromOffset();
        long to = referenceRange.getToOffset();
        Map<Long, Record> ours = records(reference, from, to);
        Map<Long, Record> theirs = records(node, from, to);
        List<Unmatched> unmatched = new ArrayList<>();
        Optional<Difference> mismatch = Optional.empty();
        TreeSet<Long> offsets = new TreeSet<>(ours.keySet());
        offsets.addAll(theirs.keySet());
        for (long offset : offsets) {
            Record mine = ours.get(offset);
            Record other = theirs.get(offset);
            if (mine != null && other != null) {
                if (!mine.equals(other)) {
                    mismatch = Optional.of(new Difference(offset, reference, node, differs(mine, reference, other,
                            node)));
                    break;
                }
            } else if (mine != null ? !nodeRange.getCompacted() : !referenceRange.getCompacted()) {
                mismatch = Optional.of(missing(mine != null ? mine : other, mine != null ? reference : node,
                        mine != null ? node : reference, reference, node, "its range is not compacted"));
                break;
            } else if (mine != null) {
                unmatched.add(new Unmatched(mine, reference, node));
            } else {
                unmatched.add(new Unmatched(other, node, reference));
            }
        }
        long excused = 0;
        for (Unmatched record : unmatched) {
            if (mismatch.isPresent() && record.record().offset() > mismatch.get().offset()) {
                break;
            }
            Optional<String> why = whyMissing(record, record.missing() == reference ? ours : theirs, to);
            if (why.isPresent()) {
                return new Result(excused, Optional.of(missing(record.record(), record.holder(), record.missing(),
                        reference, node, why.get())));
            }
            excused++;
        }
        return new Result(excused, mismatch);
    }

    /**
     * Why the replica {@code missing} may not lack the record; empty when compaction removes it (a tombstone, or a
     * key that replica holds a later record of).
     */
    private Optional<String> whyMissing(Unmatched unmatched, Map<Long, Record> rangeOfMissing, long rangeEnd) {
        Record record = unmatched.record();
        if (record.value() == null) {
            return Optional.empty();
        }
        if (record.key() == null) {
            return Optional.of("a record without a key is never compacted away");
        }
        for (Record later : rangeOfMissing.values()) {
            if (later.offset() > record.offset() && Arrays.equals(later.key(), record.key())) {
                return Optional.empty();
            }
        }
        long at = rangeEnd;
        while (true) {
            ReadPartitionResponse read = reader.read(unmatched.missing(), target.groupId(), partition, at, READ_BYTES);
            if (at >= read.getLogEndOffset() || read.getBatches().isEmpty()) {
                return Optional.of("node " + unmatched.missing() + " holds no later record of its key");
            }
            ByteBuffer bytes = read.getBatches().asReadOnlyByteBuffer();
            for (Record later : batches.records(bytes.duplicate())) {
                if (later.offset() >= at && Arrays.equals(later.key(), record.key())) {
                    return Optional.empty();
                }
            }
            at = nextOffset(bytes, at);
        }
    }

    /** The records a replica holds in {@code [from, to)}, by offset. */
    private Map<Long, Record> records(int node, long from, long to) {
        Map<Long, Record> records = new TreeMap<>();
        long at = from;
        while (at < to) {
            ReadPartitionResponse read = reader.read(node, target.groupId(), partition, at, READ_BYTES);
            ByteBuffer bytes = read.getBatches().asReadOnlyByteBuffer();
            if (!bytes.hasRemaining()) {
                break;
            }
            for (Record record : batches.records(bytes.duplicate())) {
                if (record.offset() >= at && record.offset() < to) {
                    records.put(record.offset(), record);
                }
            }
            at = nextOffset(bytes, at);
        }
        return records;
    }

    /** The offset after the last batch of a read; past {@code at} even when the read held nothing. */
    private static long nextOffset(ByteBuffer bytes, long at) {
        long next = at;
        for (int position = bytes.position(); position < bytes.limit();
             position += RecordBatchFormat.totalSize(bytes, position)) {
            next = RecordBatchFormat.lastOffset(bytes, position) + 1;
        }
        return Math.max(next, at + 1);
    }

    private static Difference missing(Record record, int holder, int lacking, int reference, int node, String why) {
        return new Difference(record.offset(), reference, node, "node " + lacking + " has no record at offset "
                + record.offset() + " (" + why + "); node " + holder + " has " + shown(record));
    }

    /** Which fields of two records at one offset differ, with both values. */
    static String differs(Record a, int nodeA, Record b, int nodeB) {
        List<String> fields = new ArrayList<>();
        if (a.receiveTimeMs() != b.receiveTimeMs()) {
            fields.add("ReceiveTime " + a.receiveTimeMs() + " on node " + nodeA + ", " + b.receiveTimeMs()
                    + " on node " + nodeB);
        }
        if (a.sendTimeMs() != b.sendTimeMs()) {
            fields.add("SendTime " + a.sendTimeMs() + " on node " + nodeA + ", " + b.sendTimeMs() + " on node "
                    + nodeB);
        }
        if (!Arrays.equals(a.key(), b.key())) {
            fields.add("key " + bytes(a.key()) + " on node " + nodeA + ", " + bytes(b.key()) + " on node " + nodeB);
        }
        if (!Arrays.equals(a.value(), b.value())) {
            fields.add("value " + bytes(a.value()) + " on node " + nodeA + ", " + bytes(b.value()) + " on node "
                    + nodeB);
        }
        if (!a.headers().equals(b.headers())) {
            fields.add("headers " + headers(a.headers()) + " on node " + nodeA + ", " + headers(b.headers())
                    + " on node " + nodeB);
        }
        return String.join("; ", fields);
    }

    private static String shown(Record record) {
        return "key " + bytes(record.key()) + ", value " + bytes(record.value()) + ", ReceiveTime "
                + record.receiveTimeMs() + ", SendTime " + record.sendTimeMs();
    }

    private static String headers(List<Header> headers) {
        List<String> shown = new ArrayList<>();
        headers.forEach(h -> shown.add(h.name() + "=" + bytes(h.value())));
        return shown.toString();
    }

    /** Bytes as text when they are UTF-8, else in hex; the first {@value #SHOWN_BYTES_MAX} only. */
    private static String bytes(byte[] bytes) {
        if (bytes == null) {
            return "null";
        }
        byte[] shown = bytes.length > SHOWN_BYTES_MAX ? Arrays.copyOf(bytes, SHOWN_BYTES_MAX) : bytes;
        String more = bytes.length > SHOWN_BYTES_MAX ? "... (" + bytes.length + " bytes)" : "";
        try {
            return "'" + StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(shown)) + "'" + more;
        } catch (CharacterCodingException e) {
            return "0x" + HexFormat.of().formatHex(shown) + more;
        }
    }
}
