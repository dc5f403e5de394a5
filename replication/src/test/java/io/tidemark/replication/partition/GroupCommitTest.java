package io.tidemark.replication.partition;

import io.tidemark.core.log.AppendResult;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.replication.statemachine.GroupEntryFormat;
import io.tidemark.replication.statemachine.PartitionKey;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Group commit over a scripted group: the requests it submits (shown as PARTITION:BATCH-HEX per batch, partitions
 * 0 and 1 of one topic) and the replies the test gives.
 */
class GroupCommitTest {
    private static final HexFormat HEX = HexFormat.of();
    private static final UUID TOPIC = new UUID(1, 2);
    /** An entry's table with one slot: the size of a one-batch entry besides its batch. */
    private static final int ONE_SLOT = GroupEntryFormat.tableBytes(1);

    /** The requests submitted, each with the future the test completes as the group's reply. */
    private final List<ByteString> requests = new ArrayList<>();
    private final List<CompletableFuture<ByteBuffer>> replies = new ArrayList<>();

    /** The broker's bound on batches not answered yet: roomy unless a test sets a smaller one. */
    private ProduceBacklog backlog = new ProduceBacklog(1 << 20);

    /** The handovers the group commit waited out: the test settles each. */
    private final List<CompletableFuture<Void>> settles = new ArrayList<>();
    private final GroupCommit.Handovers handovers = new GroupCommit.Handovers() {
        @Override
        public boolean isHandover(Throwable failure) {
            return failure instanceof Handover;
        }

        @Override
        public CompletableFuture<Void> settled(Throwable handover) {
            CompletableFuture<Void> settled = new CompletableFuture<>();
            settles.add(settled);
            return settled;
        }
    };

    /** A refusal by Ratis while leadership changes hands here. */
    private static final class Handover extends RuntimeException {
        Handover() {
            super("LeaderNotReadyException");
        }
    }

    private GroupCommit groupCommit(int maxEntryBytes, int maxInFlight) {
        return groupCommit(maxEntryBytes, maxInFlight, request -> {
            CompletableFuture<ByteBuffer> reply = new CompletableFuture<>();
            requests.add(request);
            replies.add(reply);
            return reply;
        });
    }

    /** Replies are handled on the thread that completes them: the test's. */
    private GroupCommit groupCommit(int maxEntryBytes, int maxInFlight,
                                    Function<ByteString, CompletableFuture<ByteBuffer>> submit) {
        return new GroupCommit(maxEntryBytes, maxInFlight, submit, handovers, Runnable::run, backlog);
    }

    /** A batch of partition 0 with these bytes. */
    private static GroupEntryFormat.Submitted batch(int... bytes) {
        return batchOf(0, bytes);
    }

    private static GroupEntryFormat.Submitted batchOf(int partition, int... bytes) {
        ByteBuffer batch = ByteBuffer.allocate(bytes.length);
        for (int b : bytes) {
            batch.put((byte) b);
        }
        return new GroupEntryFormat.Submitted(new PartitionKey(TOPIC, partition), batch.flip(), 1, 2, false);
    }

    /** A reply appending every batch: batch i at offset 10 * i with ReceiveTime 7. */
    private static ByteBuffer appendedReply(int count) {
        ByteBuffer reply = ByteBuffer.allocate(4 + count * 25).putInt(count);
        for (int i = 0; i < count; i++) {
            reply.put((byte) 0).putLong(10L * i).putLong(10L * i + 1).putLong(7);
        }
        return reply.flip();
    }

    @Test
    void batchesArrivingWhileAnEntryIsInFlightGoTogetherInOrder() throws Exception {
        GroupCommit commit = groupCommit(1 << 20, 1);
        CompletableFuture<AppendResult> first = commit.append(batch(1));
        CompletableFuture<AppendResult> second = commit.append(batch(2, 2));
        CompletableFuture<AppendResult> third = commit.append(batch(3));

        assertEquals(List.of(List.of("0:01")), described(requests));
        replies.get(0).complete(appendedReply(1));
        assertEquals(new AppendResult(0, 1, 7), first.get());
        assertEquals(List.of("0:0202", "0:03"), described(requests.get(1)));
        assertFalse(second.isDone());

        ByteBuffer reply = ByteBuffer.allocate(4 + 25 + 9 + 4).putInt(2)
                .put((byte) 0).putLong(1).putLong(2).putLong(8)
                .put((byte) 1).putInt(ErrorCode.INVALID_TIMESTAMP.getNumber()).putInt(4).put("late".getBytes())
                .flip();
        replies.get(1).complete(reply);
        assertEquals(new AppendResult(1, 2, 8), second.get());
        TidemarkException refused = (TidemarkException) assertThrows(ExecutionException.class, third::get).getCause();
        assertEquals(ErrorCode.INVALID_TIMESTAMP, refused.code());
        assertEquals("late", refused.getMessage());
        assertEquals(2, requests.size());
    }

    @Test
    void anEntryGrowsUpToTheLimitAndAtLeastOneBatchGoes() {
        // the table's 5 bytes and a 52-byte slot per batch: two batches of 3 bytes fit, a third does not
        GroupCommit commit = groupCommit(GroupEntryFormat.tableBytes(2) + 6, 1);
        commit.append(batch(0));
        commit.append(batch(1, 1, 1));
        commit.append(batch(2, 2, 2));
        commit.append(batch(3, 3, 3));
        replies.get(0).complete(appendedReply(1));
        replies.get(1).complete(appendedReply(2));

        assertEquals(List.of(List.of("0:00"), List.of("0:010101", "0:020202"), List.of("0:030303")),
                described(requests));

        GroupCommit small = groupCommit(ONE_SLOT, 1);
        requests.clear();
        small.append(batch(9, 9, 9, 9, 9, 9, 9, 9));
        assertEquals(List.of(List.of("0:0909090909090909")), described(requests));
    }

    @Test
    void batchesOfEveryPartitionOfTheGroupShareAnEntry() {
        GroupCommit commit = groupCommit(1 << 20, 1);
        commit.append(batchOf(0, 1));
        commit.append(batchOf(1, 2));
        commit.append(batchOf(0, 3));
        commit.append(batchOf(1, 4));
        replies.get(0).complete(appendedReply(1));

        assertEquals(List.of(List.of("0:01"), List.of("1:02", "0:03", "1:04")), described(requests),
                "one Raft entry, whatever the partitions, in arrival order");
    }

    @Test
    void upToMaxInFlightEntriesGoAtOnce() {
        GroupCommit commit = groupCommit(1 << 20, 2);
        commit.append(batch(1));
        commit.append(batch(2));
        commit.append(batch(3));
        commit.append(batch(4));

        assertEquals(List.of(List.of("0:01"), List.of("0:02")), described(requests));
        replies.get(1).complete(appendedReply(1));
        assertEquals(List.of("0:03", "0:04"), described(requests.get(2)));
    }

    @Test
    void aFailedEntryFailsEachOfItsBatchesAndTheNextEntryStillGoes() throws Exception {
        GroupCommit commit = groupCommit(1 << 20, 1);
        CompletableFuture<AppendResult> first = commit.append(batch(1));
        CompletableFuture<AppendResult> second = commit.append(batch(2));
        TidemarkException notLeader = new TidemarkException(ErrorCode.NOT_LEADER, "moved");

        replies.get(0).completeExceptionally(notLeader);
        assertSame(notLeader, assertThrows(ExecutionException.class, first::get).getCause());
        replies.get(1).complete(appendedReply(1));
        assertEquals(new AppendResult(0, 1, 7), second.get());
    }

    @Test
    void entriesGoToTheGroupInTheOrderTheyWereTakenAlsoFromTwoThreads() throws Exception {
        CountDownLatch firstInSubmit = new CountDownLatch(1);
        CountDownLatch firstMayGo = new CountDownLatch(1);
        List<String> submitted = Collections.synchronizedList(new ArrayList<>());
        GroupCommit commit = groupCommit(1 << 20, 2, request -> {
            String batch = described(request).get(0);
            if (batch.equals("0:01")) {
                firstInSubmit.countDown();
                awaitUninterruptibly(firstMayGo);
            }
            submitted.add(batch);
            return new CompletableFuture<>();
        });
        Thread first = new Thread(() -> commit.append(batch(1)));
        first.start();
        assertTrue(firstInSubmit.await(10, TimeUnit.SECONDS));
        Thread second = new Thread(() -> commit.append(batch(2)));
        second.start();

        // two entries may be in flight, but the second waits until the first is in the group
        await().atMost(Duration.ofSeconds(10)).until(() -> second.getState() == Thread.State.BLOCKED);
        assertEquals(List.of(), submitted);
        firstMayGo.countDown();
        first.join();
        second.join();
        assertEquals(List.of("0:01", "0:02"), submitted);
    }

    /**
     * Entries Ratis refused while leadership changed hands go again once it settled, ahead of the batches that came
     * since and in their first order, whatever order the refusals came in. Each batch waiting out the handover on its
     * own once went back in the order the waits ended: a producer's later batch then came before its earlier one.
     */
    @Test
    void batchesRefusedByAHandoverGoAgainInTheirOrderAheadOfLaterOnesOnceItSettled() throws Exception {
        GroupCommit commit = groupCommit(1 << 20, 2);
        CompletableFuture<AppendResult> first = commit.append(batch(1));
        CompletableFuture<AppendResult> second = commit.append(batch(2));
        CompletableFuture<AppendResult> third = commit.append(batch(3));
        assertEquals(List.of(List.of("0:01"), List.of("0:02")), described(requests));

        replies.get(1).completeExceptionally(new Handover());
        replies.get(0).completeExceptionally(new Handover());
        assertEquals(1, settles.size(), "one handover is waited out");
        assertEquals(2, requests.size(), "nothing goes while it settles");

        settles.get(0).complete(null);
        assertEquals(List.of("0:01", "0:02", "0:03"), described(requests.get(2)));
        replies.get(2).complete(appendedReply(3));
        assertEquals(List.of(new AppendResult(0, 1, 7), new AppendResult(10, 11, 7), new AppendResult(20, 21, 7)),
                List.of(first.get(), second.get(), third.get()));
    }

    @Test
    void heldBatchesWaitForTheEntriesStillInFlightBeforeTheyGoAgain() throws Exception {
        GroupCommit commit = groupCommit(1 << 20, 2);
        CompletableFuture<AppendResult> first = commit.append(batch(1));
        CompletableFuture<AppendResult> second = commit.append(batch(2));
        replies.get(0).completeExceptionally(new Handover());
        settles.get(0).complete(null);
        assertEquals(2, requests.size(), "0:02 is in flight: 0:01 going now could land after it, or before");

        replies.get(1).complete(appendedReply(1));
        assertEquals(new AppendResult(0, 1, 7), second.get());
        assertEquals(List.of("0:01"), described(requests.get(2)));
        replies.get(2).complete(appendedReply(1));
        assertEquals(new AppendResult(0, 1, 7), first.get());
    }

    @Test
    void aHandoverThatSettlesElsewhereFailsTheHeldBatchesWithItsErrorAndLaterOnesGoOn() throws Exception {
        GroupCommit commit = groupCommit(1 << 20, 1);
        CompletableFuture<AppendResult> first = commit.append(batch(1));
        CompletableFuture<AppendResult> second = commit.append(batch(2));
        replies.get(0).completeExceptionally(new Handover());
        TidemarkException notLeader = new TidemarkException(ErrorCode.NOT_LEADER, "node 2 leads");
        settles.get(0).completeExceptionally(notLeader);

        assertSame(notLeader, assertThrows(ExecutionException.class, first::get).getCause());
        assertEquals(List.of("0:02"), described(requests.get(1)), "forwarded to the leader as the group does");
        replies.get(1).complete(appendedReply(1));
        assertEquals(new AppendResult(0, 1, 7), second.get());
    }

    @Test
    void aBatchGoesThroughAtMostHandoversHandoversAndThenFailsWithTheLast() {
        GroupCommit commit = groupCommit(1 << 20, 1);
        CompletableFuture<AppendResult> batch = commit.append(batch(1));
        for (int i = 0; i <= GroupCommit.HANDOVERS; i++) {
            replies.get(i).completeExceptionally(new Handover());
            settles.get(i).complete(null);
        }
        assertEquals(GroupCommit.HANDOVERS + 1, requests.size());
        assertInstanceOf(Handover.class, assertThrows(ExecutionException.class, batch::get).getCause());
    }

    /**
     * Replies are handled on the callbacks' executor, not on the thread that completed them: Ratis completes them on
     * its apply thread, or holding its server's lock, and a next entry submitted from there deadlocked the group.
     */
    @Test
    void repliesAreHandledOnTheCallbacksExecutorNotOnTheThreadThatCompletedThem() throws Exception {
        ArrayDeque<Runnable> callbacks = new ArrayDeque<>();
        GroupCommit commit = new GroupCommit(1 << 20, 1, request -> {
            CompletableFuture<ByteBuffer> reply = new CompletableFuture<>();
            requests.add(request);
            replies.add(reply);
            return reply;
        }, handovers, callbacks::add, backlog);
        CompletableFuture<AppendResult> first = commit.append(batch(1));
        commit.append(batch(2));

        replies.get(0).complete(appendedReply(1));
        assertFalse(first.isDone());
        assertEquals(1, requests.size(), "the next entry is not submitted from the completing thread either");
        callbacks.poll().run();
        assertEquals(new AppendResult(0, 1, 7), first.get());
        assertEquals(List.of("0:02"), described(requests.get(1)));
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        try {
            assertTrue(latch.await(10, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aSubmitThatThrowsFailsItsBatches() {
        IllegalStateException closed = new IllegalStateException("closed");
        GroupCommit commit = groupCommit(1 << 20, 1, request -> {
            throw closed;
        });

        assertSame(closed, assertThrows(ExecutionException.class, () -> commit.append(batch(1)).get()).getCause());
        assertSame(closed, assertThrows(ExecutionException.class, () -> commit.append(batch(2)).get()).getCause());
    }

    private static List<List<String>> described(List<ByteString> requests) {
        return requests.stream().map(GroupCommitTest::described).toList();
    }

    /** Each batch of a request as PARTITION:BATCH-HEX, in order. */
    private static List<String> described(ByteString request) {
        ByteBuffer table = GroupEntryFormat.table(request);
        List<ByteBuffer> batches = GroupEntryFormat.batches(request);
        List<String> described = new ArrayList<>();
        for (int i = 0; i < batches.size(); i++) {
            ByteBuffer batch = batches.get(i);
            byte[] bytes = new byte[batch.remaining()];
            batch.get(bytes);
            described.add(GroupEntryFormat.slot(table, i).partition().partition() + ":" + HEX.formatHex(bytes));
        }
        return described;
    }

    /**
     * Batches not answered yet are bounded per broker: one that does not fit is refused NOT_AVAILABLE before it
     * joins the queue (nothing of it submitted), and room comes back as batches are answered, refused ones too.
     */
    @Test
    void aBatchBeyondTheBrokersBacklogIsRefusedAtOnceAndRoomComesBackWithAnswers() throws Exception {
        backlog = new ProduceBacklog(4);
        GroupCommit commit = groupCommit(1 << 20, 1);
        CompletableFuture<AppendResult> first = commit.append(batch(1, 1));
        CompletableFuture<AppendResult> second = commit.append(batch(2, 2));
        assertEquals(4, backlog.heldBytes());

        CompletableFuture<AppendResult> refused = commit.append(batch(3));
        TidemarkException error = (TidemarkException) assertThrows(ExecutionException.class, refused::get).getCause();
        assertEquals(ErrorCode.NOT_AVAILABLE, error.code());
        assertEquals("this broker holds 4 bytes of produced batches not stored yet, and a batch of 1 more would pass "
                + "produce.backlog.max.bytes 4: its partition groups are not keeping up; retry after a backoff",
                error.getMessage());
        assertEquals(1, requests.size(), "only the first entry went; the refused batch never joined the queue");

        replies.get(0).complete(appendedReply(1));
        assertEquals(new AppendResult(0, 1, 7), first.get());
        assertEquals(2, backlog.heldBytes());
        commit.append(batch(4));
        assertEquals(3, backlog.heldBytes());
        replies.get(1).completeExceptionally(new IllegalStateException("no majority"));
        assertThrows(ExecutionException.class, second::get);
        assertEquals(1, backlog.heldBytes(), "a failed batch gives its room back too");
    }

    /** A batch larger than the whole bound still goes when nothing else is held, alone. */
    @Test
    void aBatchLargerThanTheBacklogGoesAloneWhenNothingElseIsHeld() {
        backlog = new ProduceBacklog(2);
        GroupCommit commit = groupCommit(1 << 20, 1);
        CompletableFuture<AppendResult> large = commit.append(batch(1, 2, 3));
        assertEquals(List.of("0:010203"), described(requests.get(0)));
        assertTrue(commit.append(batch(4)).isCompletedExceptionally());
        assertFalse(large.isDone());
    }
}
