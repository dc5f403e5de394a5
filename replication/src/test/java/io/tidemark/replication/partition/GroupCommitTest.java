package io.tidemark.replication.partition;

import io.tidemark.core.log.AppendResult;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

class GroupCommitTest {
    private static final HexFormat HEX = HexFormat.of();

    /** The requests submitted, each with the future the test completes as the group's reply. */
    private final List<byte[]> requests = new ArrayList<>();
    private final List<CompletableFuture<ByteBuffer>> replies = new ArrayList<>();

    private GroupCommit groupCommit(int maxEntryBytes, int maxInFlight) {
        return new GroupCommit(maxEntryBytes, maxInFlight, request -> {
            CompletableFuture<ByteBuffer> reply = new CompletableFuture<>();
            requests.add(request);
            replies.add(reply);
            return reply;
        });
    }

    private static ByteBuffer batch(int... bytes) {
        ByteBuffer batch = ByteBuffer.allocate(bytes.length);
        for (int b : bytes) {
            batch.put((byte) b);
        }
        return batch.flip();
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

        assertEquals(List.of("00000001" + "00000001" + "01"), hex(requests));
        replies.get(0).complete(appendedReply(1));
        assertEquals(new AppendResult(0, 1, 7), first.get());
        assertEquals("00000002" + "00000002" + "0202" + "00000001" + "03", HEX.formatHex(requests.get(1)));
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
        // request header 4 bytes, each batch framed with 4 bytes: 4 + (4 + 3) * 2 = 18 fits, a third does not
        GroupCommit commit = groupCommit(18, 1);
        commit.append(batch(0));
        commit.append(batch(1, 1, 1));
        commit.append(batch(2, 2, 2));
        commit.append(batch(3, 3, 3));
        replies.get(0).complete(appendedReply(1));
        replies.get(1).complete(appendedReply(2));

        assertEquals(List.of("00000001" + "00000001" + "00",
                "00000002" + "00000003" + "010101" + "00000003" + "020202",
                "00000001" + "00000003" + "030303"), hex(requests));

        GroupCommit small = groupCommit(5, 1);
        requests.clear();
        small.append(batch(9, 9, 9, 9, 9, 9, 9, 9));
        assertEquals(List.of("00000001" + "00000008" + "0909090909090909"), hex(requests));
    }

    @Test
    void upToMaxInFlightEntriesGoAtOnce() {
        GroupCommit commit = groupCommit(1 << 20, 2);
        commit.append(batch(1));
        commit.append(batch(2));
        commit.append(batch(3));
        commit.append(batch(4));

        assertEquals(List.of("00000001" + "00000001" + "01", "00000001" + "00000001" + "02"), hex(requests));
        replies.get(1).complete(appendedReply(1));
        assertEquals("00000002" + "00000001" + "03" + "00000001" + "04", HEX.formatHex(requests.get(2)));
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
    void aSubmitThatThrowsFailsItsBatches() {
        IllegalStateException closed = new IllegalStateException("closed");
        GroupCommit commit = new GroupCommit(1 << 20, 1, request -> {
            throw closed;
        });

        assertSame(closed, assertThrows(ExecutionException.class, () -> commit.append(batch(1)).get()).getCause());
        assertSame(closed, assertThrows(ExecutionException.class, () -> commit.append(batch(2)).get()).getCause());
    }

    private static List<String> hex(List<byte[]> requests) {
        return requests.stream().map(HEX::formatHex).toList();
    }
}
