package io.tidemark.replication.cluster;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnsafeByteOperations;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.core.partition.PartitionLeader;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupChange;
import io.tidemark.proto.v1.GroupChangeReply;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.proto.v1.GroupSnapshot;
import io.tidemark.proto.v1.MetadataCommand;
import io.tidemark.proto.v1.PartitionState;
import io.tidemark.proto.v1.ReadPartitionResponse;
import io.tidemark.replication.partition.MoveTarget;
import io.tidemark.replication.snapshot.SnapshotSource;
import io.tidemark.replication.statemachine.GroupEntryFormat;
import io.tidemark.replication.statemachine.HostedPartition;
import io.tidemark.replication.statemachine.LeadingReplica;
import io.tidemark.replication.statemachine.PartitionHost;
import io.tidemark.replication.statemachine.PartitionKey;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A partition move between two partition groups' leading replicas, driven without Ratis: the mover reads the old
 * group's replica, seals, releases and activates through the groups' entries, and completes in the metadata. The
 * test steps in where the old group's leader does (an unseal after the new group did not finish in time).
 */
class PartitionMoveTest {
    private static final long BASE_MS = 1_700_000_000_000L;
    private static final UUID TOPIC = new UUID(7, 8);
    private static final PartitionKey T0 = new PartitionKey(TOPIC, 0);
    private static final GroupPartition PARTITION = GroupPartition.newBuilder().setTopic("t")
            .setTopicId(TopicIds.toBytes(TOPIC)).setPartition(0).build();
    private static final UUID FROM_GROUP = new UUID(1, 1);

    @TempDir
    Path dir;
    private LeadingReplica from;
    private LeadingReplica into;
    /** The mover's clock: each read of the old group moves it on by a second, so its waits pass quickly. */
    private final AtomicLong nowMs = new AtomicLong(BASE_MS);
    private final List<MetadataCommand> completed = new ArrayList<>();
    /** Runs before the old group applies a release: what its leader did meanwhile. */
    private Runnable beforeRelease = () -> { };
    private int sequence;

    @BeforeEach
    void groups() throws IOException {
        from = new LeadingReplica("from", dir.resolve("from"), BASE_MS);
        into = new LeadingReplica("into", dir.resolve("into"), BASE_MS);
        from.lead(GroupEntryFormat.change(GroupChange.newBuilder().addAdd(PARTITION).build()), BASE_MS);
        into.lead(GroupEntryFormat.change(GroupChange.newBuilder().addImport(PARTITION).build()), BASE_MS);
    }

    @AfterEach
    void close() throws IOException {
        from.close();
        into.close();
    }

    /** Produces {@code count} records into the old group, one batch each, of one idempotent producer. */
    private void produce(int count) {
        for (int i = 0; i < count; i++) {
            ByteBuffer batch = new RecordBatchBuilder().producer(42, (short) 0, sequence)
                    .append(BASE_MS, null, ("record " + sequence).getBytes(StandardCharsets.UTF_8)).build();
            sequence++;
            from.lead(GroupEntryFormat.request(List.of(new GroupEntryFormat.Submitted(T0, batch, BASE_MS, BASE_MS,
                    false))), BASE_MS + sequence);
        }
    }

    private static GroupChangeReply changeReply(ByteBuffer reply) {
        try {
            return GroupChangeReply.parseFrom(reply);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException(e);
        }
    }

    private PartitionMove move() {
        MoveTarget target = new MoveTarget() {
            @Override
            public boolean leads() {
                return true;
            }

            @Override
            public PartitionHost host() {
                return into.host();
            }

            @Override
            public CompletableFuture<GroupEntryFormat.CopyOutcome> submitCopy(PartitionKey partition,
                                                                              long logStartOffset,
                                                                              ByteBuffer batches) {
                return CompletableFuture.completedFuture(GroupEntryFormat.readCopyReply(into.lead(
                        GroupEntryFormat.copy(partition, logStartOffset, batches), nowMs.get())));
            }

            @Override
            public CompletableFuture<GroupChangeReply> submitChange(GroupChange change) {
                return CompletableFuture.completedFuture(changeReply(into.lead(GroupEntryFormat.change(change),
                        nowMs.get())));
            }

            @Override
            public String toString() {
                return "the new group";
            }
        };
        SnapshotSource source = new SnapshotSource() {
            @Override
            public GroupSnapshot latestSnapshot(int nodeId, UUID groupId) {
                throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "not used by a move");
            }

            @Override
            public ReadPartitionResponse read(int nodeId, UUID groupId, GroupPartition partition, long offset,
                                              int maxBytes) {
                nowMs.addAndGet(1_000);
                HostedPartition hosted = from.host().partition(T0).orElseThrow();
                PartitionLog log = hosted.log();
                long start = Math.max(offset, log.logStartOffset());
                ByteString batches = start == log.logEndOffset() ? ByteString.EMPTY
                        : UnsafeByteOperations.unsafeWrap(log.read(start, maxBytes).batches());
                return ReadPartitionResponse.newBuilder().setBatches(batches).setLogStartOffset(log.logStartOffset())
                        .setLogEndOffset(log.logEndOffset()).setState(hosted.state()).build();
            }
        };
        PartitionMove.Sealer oldGroup = (group, replicas, change) -> {
            if (change.getReleaseCount() > 0) {
                beforeRelease.run();
            }
            return changeReply(from.lead(GroupEntryFormat.change(change), nowMs.get()));
        };
        return new PartitionMove(target, new PartitionReplicas.Incoming(PARTITION, FROM_GROUP, List.of(1, 2),
                List.of(2, 3)), source, group -> new PartitionLeader(1, 1), oldGroup, () -> 0, completed::add, 100,
                () -> Instant.ofEpochMilli(nowMs.get()));
    }

    /** The replica's log of t-0, every batch as stored. */
    private static ByteBuffer batches(LeadingReplica replica) {
        PartitionLog log = replica.host().partition(T0).orElseThrow().log();
        return log.read(log.logStartOffset(), 1 << 20).batches();
    }

    private PartitionState state(LeadingReplica replica) {
        return replica.host().partition(T0).orElseThrow().state();
    }

    @Test
    void aMoveCopiesSealsReleasesActivatesAndCompletes() {
        produce(30);
        move().run();

        assertEquals(PartitionState.PARTITION_RELEASED, state(from));
        assertEquals(PartitionState.PARTITION_LIVE, state(into));
        assertEquals(batches(from), batches(into), "the same batches at the same offsets, byte for byte");
        assertEquals(30, into.host().partition(T0).orElseThrow().log().logEndOffset());
        assertEquals(List.of(2, 3), completed.get(0).getCompleteReassignment().getReplicaNodeIdsList());
    }

    /**
     * The old group's leader unsealed the partition (the move had not finished in time) and took batches before the
     * mover's release reached it: the release is refused, so the new group does not activate a copy short of those
     * batches; the mover copies them, seals again once its wait passed, and the move completes with every batch.
     */
    @Test
    void aReleaseAfterTheOldGroupUnsealedIsRefusedAndTheMoveSealsAgainWithTheBatchesTakenMeanwhile() {
        produce(10);
        beforeRelease = () -> {
            beforeRelease = () -> { };
            from.lead(GroupEntryFormat.change(GroupChange.newBuilder().addUnseal(PARTITION).build()), nowMs.get());
            produce(5);
        };
        move().run();

        assertEquals(PartitionState.PARTITION_RELEASED, state(from));
        assertEquals(PartitionState.PARTITION_LIVE, state(into));
        assertEquals(15, into.host().partition(T0).orElseThrow().log().logEndOffset());
        assertEquals(batches(from), batches(into));
        assertEquals(1, completed.size());
    }
}
