package io.tidemark.core.log;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchReader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Shared fixtures for log tests: batches, configs and reading a whole log back. */
public final class LogTestUtils {
    /** 2023-11-14T22:13:20Z: a round base time for readable test values. */
    public static final long BASE_MS = 1_700_000_000_000L;
    /** A partition that carries any batch max.batch.bytes allows: no Raft entry bounds it in these tests. */
    public static final int NO_ENTRY_LIMIT = Integer.MAX_VALUE;

    private LogTestUtils() {
    }

    public static TopicConfig config(String... keyValues) {
        Map<String, String> values = new java.util.HashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            values.put(keyValues[i], keyValues[i + 1]);
        }
        return TopicConfig.parse(values);
    }

    /** A batch of one record with value {@code "value-N"} and key {@code "key-N"}. */
    public static ByteBuffer singleRecordBatch(int n, long sendTimeMs) {
        return new RecordBatchBuilder().append(sendTimeMs, bytes("key-" + n), bytes("value-" + n)).build();
    }

    /** A batch of records with the given SendTimes, values {@code "v<first + i>"}. */
    public static ByteBuffer batch(int first, long... sendTimesMs) {
        RecordBatchBuilder builder = new RecordBatchBuilder();
        for (int i = 0; i < sendTimesMs.length; i++) {
            builder.append(sendTimesMs[i], null, bytes("v" + (first + i)));
        }
        return builder.build();
    }

    public static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    public static String text(byte[] bytes) {
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * What a partition's leader does with a produced batch: {@link BatchAdmission} under the log's config, then the
     * append.
     */
    public static AppendResult admitAndAppend(PartitionLog log, ByteBuffer batch, long receiveTimeMs) {
        BatchAdmission admission = new BatchAdmission();
        BatchAdmission.Admitted admitted = admission.admit(batch, log.config(), NO_ENTRY_LIMIT);
        admission.checkSendTimes(batch, admitted, log.config(), receiveTimeMs);
        return log.append(batch, receiveTimeMs);
    }

    /** Every record of the log, read from the start. */
    public static List<Record> readAll(PartitionLog log) {
        List<Record> records = new ArrayList<>();
        RecordBatchReader reader = new RecordBatchReader();
        long offset = log.logStartOffset();
        while (offset < log.logEndOffset()) {
            LogReadResult result = log.read(offset, 64 * 1024);
            for (Record record : reader.records(result.batches())) {
                if (record.offset() >= offset) {
                    records.add(record);
                }
            }
            offset = records.get(records.size() - 1).offset() + 1;
        }
        return records;
    }

    /** The seed-001 experiment: 300 single-record batches, SendTime and ReceiveTime {@code BASE_MS + i * 1000}. */
    public static PartitionLog seed001Log(Path dir, TopicConfig config) throws IOException {
        PartitionLog log = PartitionLog.open(dir, config, BASE_MS);
        for (int i = 0; i < 300; i++) {
            long time = BASE_MS + i * 1000L;
            log.append(singleRecordBatch(i, time), time);
        }
        return log;
    }
}
