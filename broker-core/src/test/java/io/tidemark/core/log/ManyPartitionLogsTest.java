package io.tidemark.core.log;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.file.OpenFileCache;
import io.tidemark.core.log.segment.LogSegment;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.tidemark.core.log.LogTestUtils.BASE_MS;
import static io.tidemark.core.log.LogTestUtils.config;
import static io.tidemark.core.log.LogTestUtils.singleRecordBatch;
import static io.tidemark.core.log.LogTestUtils.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 11's shape at unit scale: thousands of partition logs in one process, each appended to and read, through a
 * budget of open files well below their number. Without the budget each would hold its active segment's log file
 * open (and its three index maps) for its whole life.
 */
class ManyPartitionLogsTest {
    private static final int PARTITIONS = 5000;
    private static final int BUDGET = 500;
    /** Small segments, so each index is preallocated to a few entries rather than the 2-3 MiB of the defaults. */
    private static final TopicConfig CONFIG = config("segment.bytes", "65536", "index.interval.bytes", "100");

    @TempDir(factory = MemoryTempDirFactory.class)
    Path root;

    @Test
    @Timeout(120)
    void fiveThousandLogsAreAppendedToAndReadThroughFiveHundredOpenFiles() throws IOException {
        ProcessFiles.assumeProc();
        OpenFileCache files = new OpenFileCache(BUDGET);
        List<PartitionLog> logs = new ArrayList<>();
        try {
            for (int p = 0; p < PARTITIONS; p++) {
                logs.add(PartitionLog.open(root.resolve("p-" + p), CONFIG, files, BASE_MS));
            }
            for (int round = 0; round < 3; round++) {
                for (int p = 0; p < PARTITIONS; p++) {
                    long time = BASE_MS + round * 1000L;
                    logs.get(p).append(singleRecordBatch(p * 10 + round, time), time);
                }
            }
            assertEquals(BUDGET, files.openFiles());
            assertEquals(BUDGET, ProcessFiles.openFiles(root, LogSegment.LOG_SUFFIX));
            RecordBatchReader reader = new RecordBatchReader();
            for (int p = 0; p < PARTITIONS; p++) {
                PartitionLog log = logs.get(p);
                List<Record> records = reader.records(log.read(0, 1 << 16).batches());
                assertEquals(List.of("value-" + p * 10, "value-" + (p * 10 + 1), "value-" + (p * 10 + 2)),
                        records.stream().map(r -> text(r.value())).toList(), "partition " + p);
                assertEquals(new TimeLookup.Found(1, BASE_MS + 1000, BASE_MS + 1000),
                        log.lookupByReceiveTime(BASE_MS + 1));
            }
            assertEquals(BUDGET, files.openFiles());
            assertEquals(BUDGET, ProcessFiles.openFiles(root, LogSegment.LOG_SUFFIX));
            assertTrue(ProcessFiles.maps(root) <= 3L * BUDGET, "maps: " + ProcessFiles.maps(root));
        } finally {
            for (PartitionLog log : logs) {
                log.close();
            }
        }
        assertEquals(0, files.openFiles());
    }
}
