package io.tidemark.replication.verify;

import com.codahale.metrics.MetricRegistry;
import com.google.protobuf.UnsafeByteOperations;
import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.LogCompactor;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.core.log.RangeDigests;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.Header;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.v1.DigestPartitionRequest;
import io.tidemark.proto.v1.DigestPartitionResponse;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.proto.v1.ReadPartitionResponse;
import io.tidemark.replication.verify.PartitionVerdict.Outcome;
import io.tidemark.replication.verify.PartitionVerdict.Target;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The replica checker over three replicas' logs on this machine, read as a broker's ReplicaService answers: replicas
 * that agree, one that differs in a record or lacks one, one that compacted, one that cannot be read.
 */
class ReplicaVerifierTest {
    private static final long BASE_MS = 1_700_000_000_000L;
    private static final Target TARGET = new Target("orders", new UUID(1, 2), 0, new UUID(3, 4), List.of(1, 2, 3));

    @TempDir
    Path dir;
    private final Map<Integer, PartitionLog> logs = new HashMap<>();

    /** Each node's replica, read as its broker's ReplicaService answers; a node without a log cannot be reached. */
    private final ReplicaReader reader = new ReplicaReader() {
        @Override
        public DigestPartitionResponse digest(int nodeId, DigestPartitionRequest request) {
            return RangeDigests.answer(log(nodeId), request);
        }

        @Override
        public ReadPartitionResponse read(int nodeId, UUID groupId, GroupPartition partition, long offset,
                                          int maxBytes) {
            PartitionLog log = log(nodeId);
            return ReadPartitionResponse.newBuilder().setLogStartOffset(log.logStartOffset())
                    .setLogEndOffset(log.logEndOffset()).setBatches(offset >= log.logEndOffset()
                            ? com.google.protobuf.ByteString.EMPTY
                            : UnsafeByteOperations.unsafeWrap(log.read(offset, maxBytes).batches())).build();
        }

        private PartitionLog log(int nodeId) {
            PartitionLog log = logs.get(nodeId);
            if (log == null) {
                throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "node " + nodeId + " cannot be reached");
            }
            return log;
        }
    };

    @AfterEach
    void close() throws IOException {
        for (PartitionLog log : logs.values()) {
            log.close();
        }
    }

    /** A replica on {@code node} of {@code count} one-record batches: key k(i mod 5), value v(i), a header. */
    private PartitionLog replica(int node, int count, String... config) throws IOException {
        Map<String, String> values = new HashMap<>();
        for (int i = 0; i < config.length; i += 2) {
            values.put(config[i], config[i + 1]);
        }
        PartitionLog log = PartitionLog.open(dir.resolve("node-" + node), TopicConfig.parse(values), BASE_MS);
        for (int i = 0; i < count; i++) {
            append(log, i, "k" + i % 5, "v" + i);
        }
        logs.put(node, log);
        return log;
    }

    private static void append(PartitionLog log, int i, String key, String value) {
        log.append(new RecordBatchBuilder().append(BASE_MS - i, key == null ? null : utf8(key),
                value == null ? null : utf8(value), List.of(new Header("h", utf8("x")))).build(), BASE_MS + i);
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** The verifier's time: each wait moves it, and runs what the test scripted for the wait. */
    private long nowMs = BASE_MS;
    private Runnable duringWait = () -> { };
    private final Clock clock = new Clock() {
        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(nowMs);
        }
    };

    private ReplicaVerifier verifier(long catchUpMs) {
        return new ReplicaVerifier(reader, 10, catchUpMs, clock, ms -> {
            nowMs += ms;
            duringWait.run();
        });
    }

    private PartitionVerdict verify() throws InterruptedException {
        return verifier(0).verify(TARGET);
    }

    @Test
    void replicasHoldingTheSameRecordsAgreeUpToTheEarliestLogEnd() throws Exception {
        replica(1, 45);
        replica(2, 45);
        replica(3, 45);

        PartitionVerdict verdict = verify();

        assertEquals(Outcome.AGREE, verdict.outcome(), verdict.toString());
        assertEquals(0, verdict.fromOffset());
        assertEquals(45, verdict.toOffset());
        assertEquals(45, verdict.records());
        assertEquals(16, verdict.digest().length());
    }

    @Test
    void aReplicaBehindIsWaitedForAndComparedOnceItCaughtUp() throws Exception {
        replica(1, 45);
        replica(2, 45);
        PartitionLog three = replica(3, 40);
        duringWait = () -> {
            if (nowMs >= BASE_MS + 1_000 && three.logEndOffset() < 45) {
                append(three, (int) three.logEndOffset(), "k" + three.logEndOffset() % 5, "v" + three.logEndOffset());
            }
        };

        PartitionVerdict verdict = verifier(10_000).verify(TARGET);

        assertEquals(Outcome.AGREE, verdict.outcome(), verdict.toString());
        assertEquals(45, verdict.toOffset(), "node 3 applied the last 5 while it was waited for");
        assertEquals(BASE_MS + 1_800, nowMs, "it held 41 at 1 s, 45 four polls later");
    }

    /**
     * A replica that does not catch up within the wait is BEHIND, though the records it holds agree: a follower
     * whose replica of its group had stopped applying for good (a deadlock) once passed as agreeing, 1,165 records
     * short, over what it held.
     */
    @Test
    void aReplicaStillBehindAfterTheWaitIsBehindThoughWhatItHoldsAgrees() throws Exception {
        replica(1, 45);
        replica(2, 45);
        replica(3, 40);

        PartitionVerdict verdict = verifier(5_000).verify(TARGET);

        assertEquals(Outcome.BEHIND, verdict.outcome(), verdict.toString());
        assertEquals(List.of("node 3 holds offsets up to 40, 5 short of 45, which another replica held 5000 ms "
                + "before"), verdict.unread());
        assertEquals(40, verdict.toOffset(), "what every replica holds is compared");
        assertEquals(40, verdict.records());
        assertEquals(BASE_MS + 5_000, nowMs);
    }

    @Test
    void theFirstRecordThatDiffersIsNamedWithTheFieldsThatDiffer() throws Exception {
        replica(1, 30);
        PartitionLog two = replica(2, 17);
        append(two, 17, "k2", "changed");
        for (int i = 18; i < 30; i++) {
            append(two, i, "k" + i % 5, "v" + i);
        }
        replica(3, 30);

        PartitionVerdict verdict = verify();

        assertEquals(Outcome.DIFFER, verdict.outcome());
        assertEquals(new PartitionVerdict.Difference(17, 1, 2, "value 'v17' on node 1, 'changed' on node 2"),
                verdict.difference().orElseThrow());
    }

    @Test
    void aReplicaThatCompactedAgreesWhileItLacksOnlyWhatCompactionRemoves() throws Exception {
        replica(1, 40);
        replica(2, 40);
        PartitionLog compacted = replica(3, 40, "cleanup.policy", "compact", "segment.bytes", "400");
        new LogCompactor(-1, new MetricRegistry()).compact(compacted, BASE_MS, compacted.logEndOffset());

        PartitionVerdict verdict = verify();

        assertEquals(Outcome.AGREE_COMPACTED, verdict.outcome(), verdict.toString());
        assertTrue(verdict.compactedAway() > 0);
        assertEquals(40, verdict.records(), "counted on the reference");
    }

    @Test
    void aCompactedReplicaLackingTheOnlyRecordOfItsKeyDiffers() throws Exception {
        PartitionLog one = replica(1, 0);
        for (int i = 0; i < 20; i++) {
            append(one, i, i == 3 ? "only-once" : "k" + i % 5, "v" + i);
        }
        PartitionLog three = PartitionLog.recreate(dir.resolve("node-3"), TopicConfig.parse(Map.of()), 0, BASE_MS);
        logs.put(3, three);
        for (long offset = 0; offset < 20; offset++) {
            if (offset != 3) {
                three.appendStamped(one.read(offset, 1).batches());
            }
        }

        PartitionVerdict verdict = verifier(0).verify(new Target("orders", new UUID(1, 2), 0,
                new UUID(3, 4), List.of(1, 3)));

        assertEquals(Outcome.DIFFER, verdict.outcome(), verdict.toString());
        assertEquals(new PartitionVerdict.Difference(3, 1, 3, "node 3 has no record at offset 3 (node 3 holds no "
                + "later record of its key); node 1 has key 'only-once', value 'v3', ReceiveTime " + (BASE_MS + 3)
                + ", SendTime " + (BASE_MS - 3)), verdict.difference().orElseThrow());
    }

    @Test
    void replicasAreComparedFromTheLatestLogStart() throws Exception {
        replica(1, 40, "segment.bytes", "400");
        replica(2, 40);
        replica(3, 40);
        PartitionLog one = logs.get(1);
        one.deleteExpiredSegments(Long.MAX_VALUE);
        assertTrue(one.logStartOffset() > 0);

        PartitionVerdict verdict = verify();

        assertEquals(Outcome.AGREE, verdict.outcome());
        assertEquals(one.logStartOffset(), verdict.fromOffset());
        assertEquals(40 - one.logStartOffset(), verdict.records());
    }

    @Test
    void aReplicaThatCannotBeReadLeavesThePartitionUnchecked() throws Exception {
        replica(1, 10);
        replica(2, 10);

        PartitionVerdict verdict = verify();

        assertEquals(Outcome.NOT_CHECKED, verdict.outcome());
        assertEquals(List.of("node 3: NOT_AVAILABLE: node 3 cannot be reached"), verdict.unread());
    }
}
