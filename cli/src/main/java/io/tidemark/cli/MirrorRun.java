package io.tidemark.cli;

import java.util.List;
import java.util.Locale;

/**
 * What a mirror copied of one topic, from the two clusters' descriptions once the target held every record: the
 * figures {@code tidemark perf mirror} prints. Pure.
 *
 * @param partitions per partition: records, bytes on the source and on the target, and the target ReceiveTimes of
 *                   its first and last record
 */
record MirrorRun(List<Partition> partitions) {
    /**
     * One partition of the run.
     *
     * @param firstReceiveTimeMs target ReceiveTime of its first record; -1 when it has none
     * @param lastReceiveTimeMs  target ReceiveTime of its last record; -1 when it has none
     */
    record Partition(long records, long sourceBytes, long targetBytes, long firstReceiveTimeMs,
                     long lastReceiveTimeMs) {
    }

    MirrorRun {
        partitions = List.copyOf(partitions);
    }

    long records() {
        return partitions.stream().mapToLong(Partition::records).sum();
    }

    long sourceBytes() {
        return partitions.stream().mapToLong(Partition::sourceBytes).sum();
    }

    long targetBytes() {
        return partitions.stream().mapToLong(Partition::targetBytes).sum();
    }

    /** From the first record stamped on the target (any partition) to the last one; 0 without records. */
    long firstToLastMs() {
        List<Partition> held = partitions.stream().filter(p -> p.records() > 0).toList();
        if (held.isEmpty()) {
            return 0;
        }
        return held.stream().mapToLong(Partition::lastReceiveTimeMs).max().orElseThrow()
                - held.stream().mapToLong(Partition::firstReceiveTimeMs).min().orElseThrow();
    }

    /** The summary line: records, time first to last, rates (bytes as on the source), and the target's overhead. */
    String summary() {
        long ms = firstToLastMs();
        double seconds = Math.max(ms, 1) / 1000.0;
        return String.format(Locale.ROOT, "%d records on the target, first to last in %.1f s: %.0f records/s,"
                        + " %.1f MB/s of source bytes; bytes on the target %d, on the source %d (%+.1f%%)", records(),
                ms / 1000.0, records() / seconds, sourceBytes() / 1e6 / seconds, targetBytes(), sourceBytes(),
                sourceBytes() == 0 ? 0 : (targetBytes() - sourceBytes()) * 100.0 / sourceBytes());
    }
}
