package io.tidemark.replication.snapshot;

/**
 * A snapshot of a partition replica: its partition log from {@code logStartOffset} to {@code logEndOffset} is the
 * state of its Raft group after the entry ({@code term}, {@code index}). The wire form is
 * {@code tidemark.v1.SnapshotDescriptor} (replica.proto), the on-disk form {@link InstallManifest}.
 */
public record SnapshotDescriptor(long term, long index, long logStartOffset, long logEndOffset) {
    public SnapshotDescriptor {
        if (term < 0 || index < 0) {
            throw new IllegalArgumentException("a snapshot is at a Raft term and index >= 0, not (" + term + ", "
                    + index + ")");
        }
        if (logStartOffset < 0 || logStartOffset > logEndOffset) {
            throw new IllegalArgumentException("a snapshot holds offsets [" + logStartOffset + ", " + logEndOffset
                    + "): the start must be >= 0 and at most the end");
        }
    }
}
