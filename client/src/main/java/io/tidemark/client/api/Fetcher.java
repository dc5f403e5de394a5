package io.tidemark.client.api;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchReader;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.record.RecordBatchValidator;
import io.tidemark.proto.record.RecordBatchValidator.SendTimeWindow;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.v1.AbortedTransaction;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.FetchManyRequest;
import io.tidemark.proto.v1.FetchPartition;
import io.tidemark.proto.v1.FetchRequest;
import io.tidemark.proto.v1.FetchResponse;
import io.tidemark.proto.v1.IsolationLevel;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Fetches for the consumer. {@link #start} sends one FetchMany to each broker that leads partitions to read, for
 * all of them (long poll: the broker answers once one has records), in an order rotated from call to call so that
 * every partition gets its turn at the front when the answer's room runs out; a partition whose leader is not known
 * goes by a Fetch of its own, which finds the leader. Each partition's answer is queued by the gRPC thread and
 * {@link #take} hands it to the consumer's thread, which turns it into records with {@link #records}: every batch is
 * validated first (layout and CRC), so a corrupt batch fails the poll with
 * CORRUPT_BATCH instead of reaching the application, and records below the fetch offset (a fetch returns whole
 * batches, the first holding the offset) are skipped. So are transaction markers, always, and at
 * {@code read_committed} the batches of the aborted transactions the answer lists (the broker answers that level
 * with batches below the last stable offset only).
 *
 * <p>Threading: {@link #start}, {@link #take} and {@link #records} run on the consumer's thread; gRPC threads only
 * add to the answer queue.
 */
final class Fetcher {
    private final LeaderCaller leaders;
    private final int fetchMaxBytes;
    private final int fetchRequestMaxBytes;
    private final IsolationLevel isolationLevel;
    private final LinkedBlockingQueue<FetchAnswer> answers = new LinkedBlockingQueue<>();
    private final RecordBatchValidator validator = new RecordBatchValidator();
    private final RecordBatchReader reader = new RecordBatchReader();

    /**
     * One fetch's outcome: the response, or the error (then response is null).
     *
     * @param pin the topic id the fetch asked for, empty for none
     */
    record FetchAnswer(PartitionState state, long offset, Optional<UUID> pin, FetchResponse response,
                       TidemarkException error) {
    }

    /**
     * The records a fetch answer holds at or after the offset fetched, and the offset after its last batch: where the
     * next fetch starts when every batch was skipped (markers, aborted transactions).
     */
    record Fetched(List<ConsumerRecord> records, long nextOffset) {
    }

    private int rotation;

    Fetcher(LeaderCaller leaders, int fetchMaxBytes, int fetchRequestMaxBytes,
            ConsumerConfig.IsolationLevel isolationLevel) {
        this.leaders = leaders;
        this.fetchMaxBytes = fetchMaxBytes;
        this.fetchRequestMaxBytes = fetchRequestMaxBytes;
        this.isolationLevel = isolationLevel == ConsumerConfig.IsolationLevel.READ_COMMITTED
                ? IsolationLevel.READ_COMMITTED : IsolationLevel.READ_UNCOMMITTED;
    }

    /**
     * Starts fetches of {@code states}' partitions at their positions, of the topic ids they are pinned to if any: one
     * FetchMany per leader; the brokers wait up to {@code maxWaitMs}.
     */
    void start(List<PartitionState> states, long maxWaitMs) {
        Map<String, List<PartitionState>> byLeader = new LinkedHashMap<>();
        for (PartitionState state : states) {
            Optional<String> leader = leaders.leaderAddress(state.partition);
            if (leader.isPresent()) {
                byLeader.computeIfAbsent(leader.get(), address -> new ArrayList<>()).add(state);
            } else {
                fetchOne(state, maxWaitMs);
            }
        }
        rotation++;
        byLeader.forEach((address, led) -> {
            Collections.rotate(led, -(rotation % led.size()));
            fetchMany(address, led, maxWaitMs);
        });
    }

    /** One FetchMany to {@code address}; every partition's answer, or the call's failure, queued together. */
    private void fetchMany(String address, List<PartitionState> states, long maxWaitMs) {
        FetchManyRequest.Builder request = FetchManyRequest.newBuilder().setMaxBytes(fetchRequestMaxBytes)
                .setMaxWaitMs(maxWaitMs).setIsolationLevel(isolationLevel);
        long[] offsets = new long[states.size()];
        List<Optional<UUID>> pins = new ArrayList<>(states.size());
        for (int i = 0; i < states.size(); i++) {
            PartitionState state = states.get(i);
            state.fetching = true;
            offsets[i] = state.position();
            pins.add(state.topicId());
            FetchPartition.Builder partition = FetchPartition.newBuilder().setTopic(state.partition.topic())
                    .setPartition(state.partition.partition()).setOffset(offsets[i]).setMaxBytes(fetchMaxBytes);
            state.topicId().ifPresent(id -> partition.setTopicId(TopicIds.toBytes(id)));
            request.addPartitions(partition);
        }
        leaders.fetchMany(address, request.build()).whenComplete((response, error) -> {
            TidemarkException failure = error != null ? GrpcFutures.asTidemark(error)
                    : response.getOutcomesCount() != states.size() ? new TidemarkException(ErrorCode.NOT_AVAILABLE,
                    "broker " + address + " answered " + response.getOutcomesCount() + " partitions of a FetchMany of "
                            + states.size()) : null;
            List<FetchAnswer> answered = new ArrayList<>(states.size());
            for (int i = 0; i < states.size(); i++) {
                PartitionState state = states.get(i);
                if (failure != null) {
                    answered.add(new FetchAnswer(state, offsets[i], pins.get(i), null, failure));
                } else if (response.getOutcomes(i).hasFetched()) {
                    answered.add(new FetchAnswer(state, offsets[i], pins.get(i), response.getOutcomes(i).getFetched(),
                            null));
                } else {
                    TidemarkException refused = GrpcErrors.fromDetail(response.getOutcomes(i).getRefused());
                    leaders.refused(state.partition, address, refused);
                    answered.add(new FetchAnswer(state, offsets[i], pins.get(i), null, refused));
                }
            }
            answers.addAll(answered);
        });
    }

    /** A Fetch of one partition, whose leader the call looks up. */
    private void fetchOne(PartitionState state, long maxWaitMs) {
        long offset = state.position();
        state.fetching = true;
        FetchRequest.Builder request = FetchRequest.newBuilder().setTopic(state.partition.topic())
                .setPartition(state.partition.partition()).setOffset(offset).setMaxBytes(fetchMaxBytes)
                .setMaxWaitMs(maxWaitMs).setIsolationLevel(isolationLevel);
        Optional<UUID> pin = state.topicId();
        pin.ifPresent(id -> request.setTopicId(TopicIds.toBytes(id)));
        leaders.fetch(request.build()).whenComplete((response, error) -> answers.add(new FetchAnswer(state, offset,
                pin, response, error == null ? null : GrpcFutures.asTidemark(error))));
    }

    /**
     * Waits up to {@code timeoutNanos} for an answer and returns it with every other one already queued; empty
     * when none came in time or the thread was interrupted (its interrupt flag is then kept).
     */
    List<FetchAnswer> take(long timeoutNanos) {
        List<FetchAnswer> taken = new ArrayList<>();
        try {
            FetchAnswer first = answers.poll(Math.max(0, timeoutNanos), TimeUnit.NANOSECONDS);
            if (first != null) {
                taken.add(first);
                answers.drainTo(taken);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return taken;
    }

    /**
     * The records at or after {@code offset} of a fetch answer, after validating each of its batches.
     *
     * @throws TidemarkException CORRUPT_BATCH naming the partition, the offset and what is broken
     */
    Fetched records(TopicPartition tp, long offset, FetchResponse response) {
        ByteBuffer batches = response.getBatches().asReadOnlyByteBuffer().slice();
        try {
            for (int position = 0; position < batches.limit(); ) {
                position += validator.validate(batches, position, batches.limit() - position,
                        SendTimeWindow.UNBOUNDED);
            }
        } catch (TidemarkException e) {
            throw new TidemarkException(e.code(), "fetch of " + tp + " at offset " + offset + ": " + e.getMessage());
        }
        List<Record> decoded = new ArrayList<>();
        long nextOffset = offset;
        for (int position = 0; position < batches.limit(); position += RecordBatchFormat.totalSize(batches, position)) {
            nextOffset = Math.max(nextOffset, RecordBatchFormat.lastOffset(batches, position) + 1);
            if (!RecordBatchFormat.control(batches, position) && !aborted(batches, position, response)) {
                reader.decodeBatch(batches, position, decoded);
            }
        }
        List<ConsumerRecord> records = new ArrayList<>(decoded.size());
        for (Record record : decoded) {
            if (record.offset() >= offset) {
                records.add(new ConsumerRecord(tp.topic(), tp.partition(), record.offset(), record.key(),
                        record.value(), record.headers(), record.sendTimeMs(), record.receiveTimeMs()));
            }
        }
        return new Fetched(records, nextOffset);
    }

    /** At read_committed: whether the batch at {@code position} is of a transaction the answer lists as aborted. */
    private boolean aborted(ByteBuffer batches, int position, FetchResponse response) {
        if (isolationLevel != IsolationLevel.READ_COMMITTED || !RecordBatchFormat.transactional(batches, position)) {
            return false;
        }
        long producerId = RecordBatchFormat.producerId(batches, position);
        long baseOffset = RecordBatchFormat.baseOffset(batches, position);
        for (AbortedTransaction aborted : response.getAbortedTransactionsList()) {
            if (aborted.getProducerId() == producerId && aborted.getFirstOffset() <= baseOffset
                    && baseOffset <= aborted.getLastOffset()) {
                return true;
            }
        }
        return false;
    }
}
