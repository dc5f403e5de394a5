package io.tidemark.replication.statemachine;

import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * An entry of batches on its way through the leader ({@link GroupEntryFormat}): its table in an array of its own,
 * joined to the batches without copying them, so {@link PartitionHost#stamp} can stamp the table in place before the
 * entry is written to the Raft log; and the leader's words for each batch it refuses, which only its reply carries.
 *
 * <p>Not thread-safe: one request's, stamped then applied in turn.
 */
final class StampedEntry {
    private final byte[] table;
    private final ByteString data;
    private final String[] refusals;

    private StampedEntry(byte[] table, ByteString data, int count) {
        this.table = table;
        this.data = data;
        this.refusals = new String[count];
    }

    /** The entry of a request of batches, ready to stamp. */
    static StampedEntry of(ByteString request) {
        GroupEntryFormat.Stampable entry = GroupEntryFormat.stampable(request);
        return new StampedEntry(entry.array(), entry.data(), GroupEntryFormat.count(request));
    }

    /** The table, which the entry's first bytes read: stamps written to it show in {@link #data}. */
    byte[] table() {
        return table;
    }

    /** The entry's bytes. */
    ByteString data() {
        return data;
    }

    int count() {
        return refusals.length;
    }

    void refused(int i, String message) {
        refusals[i] = message;
    }

    /** Why the leader refused batch {@code i}; null when it did not (or it did not say). */
    String refusal(int i) {
        return refusals[i];
    }
}
