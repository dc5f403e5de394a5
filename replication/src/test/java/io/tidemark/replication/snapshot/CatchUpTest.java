package io.tidemark.replication.snapshot;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A replica catching up from another broker's replica of the partition (the source is a log in this test). */
class CatchUpTest {
    private static final long BASE_MS = 1_700_000_000_000L;
    private static final TopicPartition PARTITION = new TopicPartition("orders", 0);
    private static final TopicConfig CONFIG = TopicConfig.parse(Map.of("segment.bytes", "400"));
    private static final int LEADER = 2;

    @TempDir
    Path dir;
    private PartitionLog leaderLog;
    private SnapshotDescriptor snapshot;
    private final List<String> fetches = new CopyOnWriteArrayList<>();
    private volatile TidemarkException failFetchAfterFirst;
    private CatchUp catchUp;
    private StagedInstall staging;

    /** The leader's replica as another broker reads it: its snapshot and its batches. */
    private final SnapshotSource source = new SnapshotSource() {
        @Override
        public SnapshotDescriptor latestSnapshot(int nodeId, TopicPartition partition) {
            return snapshot;
        }

        @Override
        public ByteBuffer fetch(int nodeId, TopicPartition partition, long offset, int maxBytes) {
            fetches.add(nodeId + ":" + partition + "@" + offset);
            if (failFetchAfterFirst != null && fetches.size() > 1) {
                throw failFetchAfterFirst;
            }
            return leaderLog.read(offset, maxBytes).batches();
        }
    };

    @BeforeEach
    void leaderWithASnapshotBehindItsEnd() throws IOException {
        leaderLog = PartitionLog.open(dir.resolve("leader"), CONFIG, BASE_MS);
        for (int i = 0; i < 30; i++) {
            RecordBatchBuilder batch = new RecordBatchBuilder();
            for (int r = 0; r <= i % 3; r++) {
                batch.append(BASE_MS + i, null, ("record " + i + "/" + r).getBytes(StandardCharsets.UTF_8));
            }
            leaderLog.append(batch.build(), BASE_MS + i);
        }
        leaderLog.deleteExpiredSegments(BASE_MS + 604_800_000L + 10);
        long snapshotEnd = batchBoundaryAfter(45);
        snapshot = new SnapshotDescriptor(3, 77, leaderLog.logStartOffset(), snapshotEnd);
        catchUp = new CatchUp(source, 300, InstantSource.fixed(Instant.ofEpochMilli(BASE_MS)));
        staging = new StagedInstall(dir.resolve("sm"));
    }

    @AfterEach
    void close() throws IOException {
        catchUp.close();
        leaderLog.close();
    }

    private long batchBoundaryAfter(long offset) {
        return RecordBatchFormat.lastOffset(leaderLog.read(offset, 1).batches(), 0) + 1;
    }

    private CatchUp.Replica replica(boolean closed) {
        return new CatchUp.Replica("n1@orders-0", PARTITION, CONFIG, staging, () -> closed);
    }

    private static List<ByteBuffer> batches(PartitionLog log, long from, long to) {
        List<ByteBuffer> batches = new ArrayList<>();
        for (long offset = from; offset < to; ) {
            ByteBuffer batch = log.read(offset, 1).batches();
            batches.add(batch);
            offset = RecordBatchFormat.lastOffset(batch, 0) + 1;
        }
        return batches;
    }

    @Test
    void copiesTheSnapshotsBatchesUnchangedAndCommitsThem() throws IOException {
        assertTrue(snapshot.logStartOffset() > 0 && snapshot.logEndOffset() < leaderLog.logEndOffset(),
                "the leader's log starts after 0 (retention) and goes on after its snapshot");

        assertEquals(snapshot, catchUp.install(replica(false), LEADER, 78).join());

        assertTrue(fetches.size() > 1, "several fetches of at most 300 bytes: " + fetches);
        assertTrue(fetches.stream().allMatch(f -> f.startsWith(LEADER + ":orders-0@")), "all from the leader");
        assertEquals(Optional.of(snapshot), InstallManifest.read(dir.resolve("sm").resolve("install")));
        Path live = dir.resolve("sm").resolve("log");
        assertEquals(Optional.of(snapshot), staging.finish(live, s -> { }));
        try (PartitionLog copy = PartitionLog.open(live, CONFIG, BASE_MS)) {
            assertEquals(snapshot.logStartOffset(), copy.logStartOffset());
            assertEquals(snapshot.logEndOffset(), copy.logEndOffset(), "nothing after the snapshot");
            assertEquals(batches(leaderLog, snapshot.logStartOffset(), snapshot.logEndOffset()),
                    batches(copy, copy.logStartOffset(), copy.logEndOffset()), "byte for byte");
        }
    }

    @Test
    void aSnapshotThatDoesNotReachTheLeadersRaftLogIsRefused() throws IOException {
        CompletionException failed = assertThrows(CompletionException.class,
                () -> catchUp.install(replica(false), LEADER, 79).join());
        assertInstanceOf(IOException.class, failed.getCause());
        assertEquals("the latest snapshot of node 2 is at index 77 but its Raft log starts at 79: the entries "
                + "between would be missing", failed.getCause().getMessage());
        assertEquals(List.of(), fetches);
        assertEquals(Optional.empty(), staging.finish(dir.resolve("sm").resolve("log"), s -> { }));
    }

    @Test
    void aCopyThatFailsHalfWayIsNotCommitted() throws IOException {
        failFetchAfterFirst = new TidemarkException(ErrorCode.OFFSET_OUT_OF_RANGE, "retention moved the start");
        CompletionException failed = assertThrows(CompletionException.class,
                () -> catchUp.install(replica(false), LEADER, 78).join());
        assertEquals(failFetchAfterFirst, failed.getCause());
        assertEquals(Optional.empty(), InstallManifest.read(dir.resolve("sm").resolve("install")));
        assertEquals(Optional.empty(), staging.finish(dir.resolve("sm").resolve("log"), s -> { }),
                "discarded at the next open");
    }

    @Test
    void aReplicaClosingStopsTheCopy() {
        CompletionException failed = assertThrows(CompletionException.class,
                () -> catchUp.install(replica(true), LEADER, 78).join());
        InterruptedIOException cancelled = assertInstanceOf(InterruptedIOException.class,
                failed.getCause());
        assertEquals("n1@orders-0: the copy of orders-0 was cancelled at offset " + snapshot.logStartOffset()
                + " of [" + snapshot.logStartOffset() + ", " + snapshot.logEndOffset() + ")", cancelled.getMessage());
    }
}
