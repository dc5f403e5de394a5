package io.tidemark.replication.snapshot;

import com.google.protobuf.ByteString;
import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.proto.v1.GroupSnapshot;
import io.tidemark.proto.v1.PartitionSnapshot;
import io.tidemark.proto.v1.ReadPartitionResponse;
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
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A replica catching up from another broker's replica of a group hosting partitions 0 and 1 of orders (the source is
 * two logs in this test).
 */
class CatchUpTest {
    private static final long BASE_MS = 1_700_000_000_000L;
    private static final TopicConfig CONFIG = TopicConfig.parse(Map.of("segment.bytes", "400"));
    private static final UUID ORDERS = new UUID(3, 4);
    private static final UUID GROUP = new UUID(5, 6);
    private static final int LEADER = 2;

    @TempDir
    Path dir;
    /** The leader's logs of orders-0 (retention moved its start, it goes on after the snapshot) and of orders-1. */
    private PartitionLog leaderLog;
    private PartitionLog otherLog;
    private GroupSnapshot snapshot;
    private final List<String> fetches = new CopyOnWriteArrayList<>();
    private volatile TidemarkException failFetchAfterFirst;
    private CatchUp catchUp;
    private StagedInstall staging;

    /** The leader's replica as another broker reads it: its snapshot and its batches. */
    private final SnapshotSource source = new SnapshotSource() {
        @Override
        public GroupSnapshot latestSnapshot(int nodeId, UUID groupId) {
            assertEquals(GROUP, groupId);
            return snapshot;
        }

        @Override
        public ReadPartitionResponse read(int nodeId, UUID groupId, GroupPartition partition, long offset,
                                          int maxBytes) {
            assertEquals(GROUP, groupId, "the reads name the group whose snapshot is copied");
            assertEquals(ORDERS, TopicIds.fromBytes(partition.getTopicId()), "and the topic's id");
            fetches.add(nodeId + ":" + partition.getTopic() + "-" + partition.getPartition() + "@" + offset);
            if (failFetchAfterFirst != null && fetches.size() > 1) {
                throw failFetchAfterFirst;
            }
            PartitionLog log = partition.getPartition() == 0 ? leaderLog : otherLog;
            return ReadPartitionResponse.newBuilder().setBatches(ByteString.copyFrom(log.read(offset, maxBytes)
                    .batches())).setLogStartOffset(log.logStartOffset()).setLogEndOffset(log.logEndOffset()).build();
        }
    };

    @BeforeEach
    void leaderWithASnapshotBehindItsEnd() throws IOException {
        leaderLog = PartitionLog.open(dir.resolve("leader"), CONFIG, BASE_MS);
        otherLog = PartitionLog.open(dir.resolve("leader-1"), CONFIG, BASE_MS);
        for (int i = 0; i < 30; i++) {
            RecordBatchBuilder batch = new RecordBatchBuilder();
            for (int r = 0; r <= i % 3; r++) {
                batch.append(BASE_MS + i, null, ("record " + i + "/" + r).getBytes(StandardCharsets.UTF_8));
            }
            leaderLog.append(batch.build(), BASE_MS + i);
            if (i < 5) {
                otherLog.append(new RecordBatchBuilder().append(BASE_MS + i, null, new byte[] {(byte) i}).build(),
                        BASE_MS + i);
            }
        }
        leaderLog.deleteExpiredSegments(BASE_MS + 604_800_000L + 10);
        snapshot = GroupSnapshot.newBuilder().setTerm(3).setIndex(77)
                .addPartitions(PartitionSnapshot.newBuilder().setPartition(partition(0))
                        .setLogStartOffset(leaderLog.logStartOffset()).setLogEndOffset(batchBoundaryAfter(45)))
                .addPartitions(PartitionSnapshot.newBuilder().setPartition(partition(1)).setLogEndOffset(5))
                .build();
        catchUp = new CatchUp(source, 300, InstantSource.fixed(Instant.ofEpochMilli(BASE_MS)));
        staging = new StagedInstall(dir.resolve("sm"));
    }

    @AfterEach
    void close() throws IOException {
        catchUp.close();
        leaderLog.close();
        otherLog.close();
    }

    private long batchBoundaryAfter(long offset) {
        return RecordBatchFormat.lastOffset(leaderLog.read(offset, 1).batches(), 0) + 1;
    }

    private static GroupPartition partition(int partition) {
        return GroupPartition.newBuilder().setTopic("orders").setTopicId(TopicIds.toBytes(ORDERS))
                .setPartition(partition).build();
    }

    private CatchUp.Replica replica(boolean closed) {
        return new CatchUp.Replica("n1@group", GROUP, staging, overrides -> CONFIG, () -> closed);
    }

    private PartitionSnapshot orders0() {
        return snapshot.getPartitions(0);
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
    void copiesEveryPartitionsBatchesUnchangedAndCommitsThem() throws IOException {
        assertTrue(orders0().getLogStartOffset() > 0 && orders0().getLogEndOffset() < leaderLog.logEndOffset(),
                "the leader's log starts after 0 (retention) and goes on after its snapshot");

        assertEquals(snapshot, catchUp.install(replica(false), LEADER, 78).join());

        assertTrue(fetches.size() > 2, "several fetches of at most 300 bytes: " + fetches);
        assertTrue(fetches.stream().allMatch(f -> f.startsWith(LEADER + ":orders-")), "all from the leader");
        assertEquals(Optional.of(snapshot), GroupSnapshotFile.readIfWhole(dir.resolve("sm").resolve("install")
                .resolve(StagedInstall.MANIFEST)));
        Path live = dir.resolve("sm").resolve("partitions");
        assertEquals(Optional.of(snapshot), staging.finish(live, s -> { }));
        try (PartitionLog copy = PartitionLog.open(live.resolve(PartitionDirectories.name(partition(0))), CONFIG,
                BASE_MS); PartitionLog other = PartitionLog.open(live.resolve(PartitionDirectories.name(partition(1))),
                CONFIG, BASE_MS)) {
            assertEquals(orders0().getLogStartOffset(), copy.logStartOffset());
            assertEquals(orders0().getLogEndOffset(), copy.logEndOffset(), "nothing after the snapshot");
            assertEquals(batches(leaderLog, orders0().getLogStartOffset(), orders0().getLogEndOffset()),
                    batches(copy, copy.logStartOffset(), copy.logEndOffset()), "byte for byte");
            assertEquals(batches(otherLog, 0, 5), batches(other, 0, other.logEndOffset()));
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
        assertEquals(Optional.empty(), staging.finish(dir.resolve("sm").resolve("partitions"), s -> { }));
    }

    @Test
    void aCopyThatFailsHalfWayIsNotCommitted() throws IOException {
        failFetchAfterFirst = new TidemarkException(ErrorCode.OFFSET_OUT_OF_RANGE, "retention moved the start");
        CompletionException failed = assertThrows(CompletionException.class,
                () -> catchUp.install(replica(false), LEADER, 78).join());
        assertEquals(failFetchAfterFirst, failed.getCause());
        assertEquals(Optional.empty(), GroupSnapshotFile.readIfWhole(dir.resolve("sm").resolve("install")
                .resolve(StagedInstall.MANIFEST)));
        assertEquals(Optional.empty(), staging.finish(dir.resolve("sm").resolve("partitions"), s -> { }),
                "discarded at the next open");
    }

    @Test
    void aReplicaClosingStopsTheCopy() {
        CompletionException failed = assertThrows(CompletionException.class,
                () -> catchUp.install(replica(true), LEADER, 78).join());
        InterruptedIOException cancelled = assertInstanceOf(InterruptedIOException.class,
                failed.getCause());
        assertEquals("n1@group: the copy of orders-0 was cancelled at offset " + orders0().getLogStartOffset()
                + " of [" + orders0().getLogStartOffset() + ", " + orders0().getLogEndOffset() + ")",
                cancelled.getMessage());
    }
}
