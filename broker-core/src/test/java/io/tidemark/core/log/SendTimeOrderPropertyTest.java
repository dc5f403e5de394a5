package io.tidemark.core.log;

import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchBuilder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Random;

import static io.tidemark.core.log.LogTestUtils.BASE_MS;
import static io.tidemark.core.log.LogTestUtils.config;
import static io.tidemark.core.log.LogTestUtils.readAll;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Out-of-order SendTimes (several producers, lagging mirrors, bad clocks): a lookup by SendTime must return
 * exactly what a linear scan of the log returns, and a lookup by ReceiveTime likewise with many equal
 * ReceiveTimes. Random logs from fixed seeds, with small segments and a dense index so lookups cross segment
 * and index-entry boundaries.
 */
class SendTimeOrderPropertyTest {
    @TempDir
    Path dir;

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
    void lookupsMatchLinearScan(long seed) throws Exception {
        Random random = new Random(seed);
        String segmentBytes = Integer.toString(300 + random.nextInt(3000));
        String interval = Integer.toString(random.nextInt(400));
        try (PartitionLog log = PartitionLog.open(dir, config("segment.bytes", segmentBytes,
                "index.interval.bytes", interval, "send.time.before.max.ms", "-1"), BASE_MS)) {
            long receiveTime = BASE_MS;
            int batches = 50 + random.nextInt(150);
            for (int b = 0; b < batches; b++) {
                receiveTime += random.nextInt(3) * 1000L;
                RecordBatchBuilder builder = new RecordBatchBuilder();
                int records = 1 + random.nextInt(5);
                for (int r = 0; r < records; r++) {
                    long sendTime = receiveTime - random.nextInt(600) * 1000L + random.nextInt(1000);
                    builder.append(Math.max(0, sendTime), null, new byte[random.nextInt(40)]);
                }
                log.append(builder.build(), receiveTime);
            }
            List<Record> all = readAll(log);
            long from = BASE_MS - 700_000;
            for (long t = from; t <= receiveTime + 2000; t += 1 + random.nextInt(7000)) {
                assertEquals(linearSendTimeScan(all, t, log.logEndOffset()), log.lookupBySendTime(t),
                        "SendTime " + t);
                assertEquals(linearReceiveTimeScan(all, t, log.logEndOffset()), log.lookupByReceiveTime(t),
                        "ReceiveTime " + t);
            }
        }
    }

    private static TimeLookup linearSendTimeScan(List<Record> all, long t, long logEnd) {
        for (Record r : all) {
            if (r.sendTimeMs() >= t) {
                return new TimeLookup.Found(r.offset(), r.receiveTimeMs(), r.sendTimeMs());
            }
        }
        return new TimeLookup.NotFound(logEnd);
    }

    private static TimeLookup linearReceiveTimeScan(List<Record> all, long t, long logEnd) {
        for (Record r : all) {
            if (r.receiveTimeMs() >= t) {
                return new TimeLookup.Found(r.offset(), r.receiveTimeMs(), r.sendTimeMs());
            }
        }
        return new TimeLookup.NotFound(logEnd);
    }
}
