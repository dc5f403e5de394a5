package io.tidemark.mirror;

import io.tidemark.mirror.sink.PartitionCopier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs a mirror's progress: records and bytes copied since the last line, the records it is behind, and how many
 * partitions are stopped.
 */
final class ProgressLog {
    private static final Logger LOG = LoggerFactory.getLogger(ProgressLog.class);

    private final MirrorMetrics metrics;
    private final Iterable<PartitionCopier> copiers;
    private long lastRecords;
    private long lastBytes;

    ProgressLog(MirrorMetrics metrics, Iterable<PartitionCopier> copiers) {
        this.metrics = metrics;
        this.copiers = copiers;
    }

    void log() {
        long records = metrics.recordsCopied();
        long bytes = metrics.bytesCopied();
        long behind = 0;
        int partitions = 0;
        int stopped = 0;
        for (PartitionCopier copier : copiers) {
            behind += copier.lagRecords();
            partitions++;
            stopped += copier.stopped() ? 1 : 0;
        }
        LOG.info("Copied {} records ({} bytes) since the last report, {} in all; {} partitions ({} stopped), {} "
                + "records behind", records - lastRecords, bytes - lastBytes, records, partitions, stopped, behind);
        lastRecords = records;
        lastBytes = bytes;
    }
}
