package io.tidemark.mirror;

import io.tidemark.mirror.sink.PartitionCopier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Logs a mirror's progress: records and bytes copied since the last line, and the records it is behind. */
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
        for (PartitionCopier copier : copiers) {
            behind += copier.lagRecords();
            partitions++;
        }
        LOG.info("Copied {} records ({} bytes) since the last report, {} in all; {} partitions, {} records behind",
                records - lastRecords, bytes - lastBytes, records, partitions, behind);
        lastRecords = records;
        lastBytes = bytes;
    }
}
