package io.tidemark.core.group;

import com.codahale.metrics.Counter;
import com.codahale.metrics.MetricRegistry;
import io.tidemark.core.ManualClock;
import io.tidemark.core.log.AppendResult;
import io.tidemark.core.log.HeldOrigin;
import io.tidemark.core.log.LogCompactor;
import io.tidemark.core.log.LogReadResult;
import io.tidemark.core.log.TimeLookup;
import io.tidemark.core.partition.AppendWaiters;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.partition.PartitionStatus;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchReader;
import io.tidemark.replication.partition.OneReplicaGroup;
import io.tidemark.replication.partition.ReplicatedPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The group offsets over the production partition: {@code __group_offsets-0} in a Raft group of one replica. */
class GroupOffsetStoreTest {
    private static final TopicPartition ORDERS = new TopicPartition("orders", 0);
    private static final TopicPartition OFFSETS = new TopicPartition(GroupOffsetStore.TOPIC, 0);
    private static final UUID OFFSETS_ID = new UUID(0, 2);

    @TempDir
    Path dir;
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);
    private OneReplicaGroup group;
    private ReplicatedPartition local;

    @BeforeEach
    void open() throws IOException {
        group = OneReplicaGroup.start(dir, clock);
        local = group.add(OFFSETS, OFFSETS_ID, GroupOffsetStore.TOPIC_CONFIG);
    }

    @AfterEach
    void close() throws IOException {
        group.close();
    }

    /** Segments of 100 bytes, so that a few commits close one, and compaction has something to do. */
    private void smallSegments() {
        Map<String, String> overrides = new HashMap<>(GroupOffsetStore.TOPIC_CONFIG);
        overrides.put("segment.bytes", "100");
        group.configure(OFFSETS, OFFSETS_ID, overrides);
    }

    /** Compacts as the broker's maintenance does, once a snapshot of the group covers the log. */
    private void compact() throws IOException {
        group.snapshot(local);
        local.compact(clock.millis(), new LogCompactor(-1, new MetricRegistry()));
    }

    @Test
    void aCommitThroughALaggingReplicaIsReadBackThroughIt() throws Exception {
        GroupOffsetStore store = GroupOffsetStore.over(new LaggingReplica(local), clock, new Counter());
        store.commit("billing", Map.of(ORDERS, new GroupOffsetStore.Committed(42, "m", 0)));
        assertEquals(Optional.of(new GroupOffsetStore.Committed(42, "m", clock.millis())),
                store.committed("billing", ORDERS), "the commit waited for this broker's replica to hold it");
    }

    @Test
    void aRecordThatIsNotACommitIsSkippedAndCountedAndTheGroupsAroundItStay() throws Exception {
        Counter skipped = new Counter();
        GroupOffsetStore store = GroupOffsetStore.over(local, clock, skipped);
        store.commit("billing", Map.of(ORDERS, new GroupOffsetStore.Committed(42, "m", 0)));
        local.append(new RecordBatchBuilder().append(clock.millis(), "not a key".getBytes(StandardCharsets.UTF_8),
                new byte[]{1, 2, 3}).build()).get();
        store.commit("shipping", Map.of(ORDERS, new GroupOffsetStore.Committed(7, "", 0)));

        assertEquals(Optional.of(new GroupOffsetStore.Committed(42, "m", clock.millis())),
                store.committed("billing", ORDERS));
        assertEquals(Optional.of(new GroupOffsetStore.Committed(7, "", clock.millis())),
                store.committed("shipping", ORDERS));
        assertEquals(1, skipped.getCount(), "the record at offset 1 was skipped once");
        GroupOffsetStore restarted = GroupOffsetStore.over(local, clock, skipped);
        assertEquals(List.of("billing", "shipping"), List.copyOf(restarted.groups()), "a replay skips it too");
        assertEquals(2, skipped.getCount());
    }

    @Test
    void deletedOffsetsAreGoneAlsoAfterAReplayAndOthersStay() throws Exception {
        TopicPartition orders1 = new TopicPartition("orders", 1);
        TopicPartition audit = new TopicPartition("audit", 0);
        GroupOffsetStore store = GroupOffsetStore.over(local, clock, new Counter());
        store.commit("billing", Map.of(ORDERS, new GroupOffsetStore.Committed(42, "", 0),
                orders1, new GroupOffsetStore.Committed(7, "", 0), audit, new GroupOffsetStore.Committed(3, "", 0)));
        store.commit("shipping", Map.of(ORDERS, new GroupOffsetStore.Committed(9, "", 0)));

        assertEquals(List.of(ORDERS, orders1), store.delete("billing", List.of(orders1, ORDERS,
                new TopicPartition("orders", 2))), "a partition never committed is left out");
        assertEquals(List.of(), store.delete("billing", List.of(ORDERS)), "already gone: nothing written");
        assertEquals(6, local.logEndOffset(), "four offsets committed, then two tombstones");
        assertEquals(List.of(audit), List.copyOf(store.committed("billing").keySet()));
        assertEquals(List.of(audit), store.delete("billing", List.of(audit)));

        GroupOffsetStore restarted = GroupOffsetStore.over(local, clock, new Counter());
        assertEquals(List.of("shipping"), List.copyOf(restarted.groups()), "a group with no offsets left is gone");
        assertEquals(Optional.of(new GroupOffsetStore.Committed(9, "", clock.millis())),
                restarted.committed("shipping", ORDERS));
    }

    /**
     * A store that has not read the topic for half a tombstone's retention reads it again from its start: compaction
     * may have removed a tombstone (and the commit it deleted) it never read, and reading on from where it stopped it
     * would keep answering the deleted offset.
     */
    @Test
    void aStoreIdleForHalfATombstonesRetentionReadsTheTopicAgainAndMissesNoDeletion() throws Exception {
        smallSegments();
        GroupOffsetStore writer = GroupOffsetStore.over(local, clock, new Counter());
        GroupOffsetStore reader = GroupOffsetStore.over(local, clock, new Counter());
        writer.commit("g", Map.of(ORDERS, new GroupOffsetStore.Committed(5, "", 0)));
        assertEquals(List.of(ORDERS), List.copyOf(reader.committed("g").keySet()));
        writer.delete("g", List.of(ORDERS));
        writer.commit("other", Map.of(ORDERS, new GroupOffsetStore.Committed(1, "", 0)));
        clock.set(clock.millis() + 2 * GroupOffsetStore.TOMBSTONE_RETENTION_MS);
        compact();

        assertEquals(Map.of(), reader.committed("g"));
        assertEquals(List.of("other"), List.copyOf(reader.groups()));
    }

    @Test
    void aStoreStartedOnTheCompactedTopicReadsTheLatestCommitsAndNoDeletedGroup() throws Exception {
        smallSegments();
        GroupOffsetStore store = GroupOffsetStore.over(local, clock, new Counter());
        for (int offset = 1; offset <= 5; offset++) {
            store.commit("billing", Map.of(ORDERS, new GroupOffsetStore.Committed(offset, "", 0)));
        }
        store.commit("shipping", Map.of(ORDERS, new GroupOffsetStore.Committed(9, "", 0)));
        store.deleteGroup("shipping");
        store.commit("billing", Map.of(ORDERS, new GroupOffsetStore.Committed(6, "", 0)));
        clock.set(clock.millis() + Duration.ofDays(2).toMillis());
        compact();

        List<Long> left = new ArrayList<>();
        for (long offset = 0; offset < local.logEndOffset(); ) {
            for (Record record : new RecordBatchReader().records(local.read(offset, 1 << 20).batches())) {
                left.add(record.offset());
                offset = record.offset() + 1;
            }
        }
        assertEquals(List.of(4L, 7L), left, "billing's commit of offset 5 (the latest in the closed segments), "
                + "shipping's commit at 5 and its tombstone at 6 gone (after delete.retention.ms), and in the active "
                + "segment billing's commit of offset 6");
        GroupOffsetStore restarted = GroupOffsetStore.over(local, clock, new Counter());
        assertEquals(List.of("billing"), List.copyOf(restarted.groups()));
        assertEquals(6, restarted.committed("billing", ORDERS).orElseThrow().offset());
    }

    /**
     * A follower's replica of the group offsets: an append is acknowledged as the leader would (committed there,
     * at the replica's log end), but reaches this replica only when someone waits for its next append.
     */
    private static final class LaggingReplica implements Partition {
        private final Partition replica;
        private ByteBuffer notYetHere;

        LaggingReplica(Partition replica) {
            this.replica = replica;
        }

        @Override
        public synchronized CompletableFuture<AppendResult> append(ByteBuffer batch) {
            notYetHere = batch;
            long base = replica.logEndOffset();
            return CompletableFuture.completedFuture(new AppendResult(base,
                    base + RecordBatchFormat.recordCount(batch, batch.position()) - 1, 0));
        }

        @Override
        public synchronized AppendWaiters.Waiter awaitAppend(Runnable onAppend) {
            if (notYetHere == null) {
                return new AppendWaiters().await(onAppend);
            }
            ByteBuffer batch = notYetHere;
            notYetHere = null;
            replica.append(batch).join();
            return AppendWaiters.wokenNow(onAppend);
        }

        @Override
        public TopicPartition id() {
            return replica.id();
        }

        @Override
        public void checkClientReadable() {
            replica.checkClientReadable();
        }

        @Override
        public LogReadResult read(long offset, int maxBytes) {
            return replica.read(offset, maxBytes);
        }

        @Override
        public LogReadResult readCommitted(long offset, int maxBytes) {
            return replica.readCommitted(offset, maxBytes);
        }

        @Override
        public long highWatermark() {
            return replica.highWatermark();
        }

        @Override
        public long lastStableOffset() {
            return replica.lastStableOffset();
        }

        @Override
        public long logStartOffset() {
            return replica.logStartOffset();
        }

        @Override
        public long logEndOffset() {
            return replica.logEndOffset();
        }

        @Override
        public TimeLookup lookupByReceiveTime(long receiveTimeMs) {
            return replica.lookupByReceiveTime(receiveTimeMs);
        }

        @Override
        public TimeLookup lookupBySendTime(long sendTimeMs) {
            return replica.lookupBySendTime(sendTimeMs);
        }

        @Override
        public Optional<HeldOrigin> heldOrigin(OriginPartition origin) {
            return replica.heldOrigin(origin);
        }

        @Override
        public PartitionStatus status() {
            return replica.status();
        }

        @Override
        public void applyRetention(long nowMs) {
            replica.applyRetention(nowMs);
        }

        @Override
        public void compact(long nowMs, LogCompactor compactor) throws IOException {
            replica.compact(nowMs, compactor);
        }

        @Override
        public void flushIfDue(long nowMs) {
            replica.flushIfDue(nowMs);
        }

        @Override
        public boolean writeBack(long minBytes) {
            return replica.writeBack(minBytes);
        }

        @Override
        public void close() throws IOException {
            replica.close();
        }
    }
}
