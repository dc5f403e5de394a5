package io.tidemark.client.api;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.ListOffsetsResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.ObjLongConsumer;
import java.util.regex.Pattern;

/**
 * Reads records from partitions assigned by hand ({@link #assign}) or by its group ({@link #subscribe}: the group's
 * coordinator shares the subscribed topics' partitions among the group's members and moves them as members come and
 * go; {@link GroupMembership}). {@link #poll} fetches every assigned partition at once (long poll,
 * bounded by the poll's timeout), validates each fetched batch, and returns up to {@code max.poll.records}
 * records in offset order per partition, keeping the rest for the next poll. Positions move as records are
 * returned; {@code seek*} moves them by offset, by ReceiveTime or by SendTime (ListOffsets).
 *
 * <p>A partition with no position yet starts at its group's committed offset when there is one, else by
 * {@code auto.offset.reset}; a position that falls out of the log (OFFSET_OUT_OF_RANGE) is reset by
 * {@code auto.offset.reset}. A subscribed consumer commits its positions on its own with {@code enable.auto.commit}
 * (the default): every {@code auto.commit.interval.ms} from poll, before the group takes a partition away, and when it
 * leaves; otherwise offsets are committed only when asked ({@link #commitSync}, {@link #commitAsync}).
 *
 * <p>Each partition reads one topic: the first fetch answered pins the partition to the id of the topic it read (or
 * {@link #seek(TopicPartition, long, UUID)} pins it), and every later fetch asks for that id. When the topic was
 * deleted and created again under its name, the broker refuses the fetch (UNKNOWN_TOPIC_ID) instead of handing out
 * the new topic's records at the old topic's offsets: the partition stops (it is not fetched until it is sought, or
 * unassigned and assigned again) and {@link #poll} throws the error once. A seek without an id and the
 * {@code seekTo*} methods unpin it (the next answer pins it again); a reset after OFFSET_OUT_OF_RANGE keeps the pin.
 *
 * <p>Not thread-safe, like Kafka's consumer: one thread uses it (the futures of {@link #commitAsync} complete on
 * gRPC threads). Every failure of a call surfaces as a {@link TidemarkException}.
 */
public final class TidemarkConsumer implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(TidemarkConsumer.class);

    private final ConsumerConfig config;
    private final boolean autoCommit;
    private final Clock clock;
    private final BrokerChannels channels;
    private final LeaderCaller leaders;
    private final GroupOffsets groupOffsets;
    private final Fetcher fetcher;
    private final Map<TopicPartition, PartitionState> states = new LinkedHashMap<>();
    /** The group membership while subscribed; null while partitions are assigned by hand (or none). */
    private GroupMembership membership;
    private RebalanceListener listener = RebalanceListener.NONE;
    /** When a subscribed consumer with enable.auto.commit commits next (clock millis). */
    private long nextAutoCommitAtMs;
    /** What the group's answers do to this consumer's partitions. */
    private final GroupMembership.Changes changes = new GroupMembership.Changes() {
        @Override
        public void revoked(Set<TopicPartition> partitions) {
            revoke(partitions);
        }

        @Override
        public void assigned(Set<TopicPartition> partitions) {
            partitions.forEach(tp -> states.put(tp, new PartitionState(tp)));
            listener.onPartitionsAssigned(partitions);
        }

        @Override
        public void lost(Set<TopicPartition> partitions) {
            listener.onPartitionsLost(partitions);
            states.keySet().removeAll(partitions);
        }
    };
    private int drainRotation;
    /** When poll may look positions up again after a retriable failure (clock millis). */
    private long positionsRetryAtMs;
    private boolean closed;

    public TidemarkConsumer(ConsumerConfig config) {
        this(config, config.enableAutoCommit());
    }

    /** With {@code autoCommit} false whatever the config says: a {@link ConsumerRuntime} commits for itself. */
    TidemarkConsumer(ConsumerConfig config, boolean autoCommit) {
        this.config = config;
        this.autoCommit = autoCommit;
        ConnectionSettings connection = config.connection();
        this.clock = connection.clock();
        this.channels = new BrokerChannels(connection);
        AnyBrokerCaller anyBroker = new AnyBrokerCaller(connection.bootstrap(), channels,
                connection.requestTimeoutMs());
        this.leaders = new LeaderCaller(new ClusterMetadata(anyBroker), channels, connection.requestTimeoutMs(),
                LeaderCaller.Callbacks.CHANNEL_EXECUTOR);
        this.groupOffsets = new GroupOffsets(leaders);
        this.fetcher = new Fetcher(leaders, config.fetchMaxBytes(), config.fetchRequestMaxBytes(),
                config.isolationLevel());
    }

    /**
     * Reads exactly these partitions from now on; partitions still assigned keep their positions, pinned topic ids
     * and stops (UNKNOWN_TOPIC_ID); a partition assigned anew starts unpinned.
     */
    public void assign(Collection<TopicPartition> partitions) {
        ensureOpen();
        if (membership != null) {
            throw new IllegalStateException("the consumer is subscribed to group " + group() + "; unsubscribe "
                    + "before assigning partitions by hand");
        }
        Map<TopicPartition, PartitionState> next = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            next.put(tp, states.getOrDefault(tp, new PartitionState(tp)));
        }
        states.clear();
        states.putAll(next);
    }

    public Set<TopicPartition> assignment() {
        return Set.copyOf(states.keySet());
    }

    /**
     * Joins the consumer's group, subscribed to {@code topics}: from the next poll on, the group's coordinator gives
     * this consumer its share of their partitions and moves partitions between the members as they come and go;
     * {@code listener} hears of each change inside {@code poll}. Called again while subscribed, it changes the
     * subscription in place, as the same member (partitions of topics it drops are revoked as in any rebalance). Each partition starts at the group's committed
     * offset (else by auto.offset.reset). Commits carry this member's id and epoch, so a commit of a partition the
     * group has given to another member is refused.
     *
     * @throws IllegalStateException without a group, or while partitions are assigned by hand
     */
    public void subscribe(Collection<String> topics, RebalanceListener listener) {
        subscribe(Set.copyOf(topics), null, listener);
    }

    /**
     * Like {@link #subscribe(Collection, RebalanceListener)}, for every topic whose whole name matches, as they appear.
     * The group's coordinator matches the pattern's text with RE2/J, in time linear in a topic name: Java's syntax
     * without lookaround and backreferences, which it refuses INVALID_REQUEST.
     */
    public void subscribe(Pattern pattern, RebalanceListener listener) {
        subscribe(Set.of(), pattern, listener);
    }

    private void subscribe(Set<String> topics, Pattern pattern, RebalanceListener listener) {
        ensureOpen();
        String group = group();
        if (membership == null && !states.isEmpty()) {
            throw new IllegalStateException("partitions are assigned by hand " + states.keySet() + "; assign none "
                    + "before subscribing");
        }
        this.listener = listener;
        if (membership != null) {
            membership.resubscribe(topics, pattern);
        } else {
            this.membership = new GroupMembership(group, config, leaders, topics, pattern);
        }
    }

    /**
     * Leaves the group: the listener hears its partitions revoked (commit there), then the coordinator gives them to
     * the others. Does nothing when not subscribed.
     */
    public void unsubscribe() {
        ensureOpen();
        if (membership == null) {
            return;
        }
        revoke(membership.owned());
        membership.leave();
        membership = null;
        listener = RebalanceListener.NONE;
    }

    /**
     * Returns the records fetched since the last poll, waiting up to {@code timeout} for some when none are
     * buffered; empty when none came in time (or the thread was interrupted, whose flag is kept).
     *
     * @throws TidemarkException CORRUPT_BATCH for a fetched batch that fails validation; UNKNOWN_TOPIC_ID (once,
     *                           naming the partition and offset) when a partition's pinned topic was deleted and
     *                           created again, which stops that partition; a non-retriable fetch or lookup error
     *                           (UNKNOWN_TOPIC, ...). Retriable ones are retried in the poll.
     * @throws IllegalStateException when no partition is assigned
     */
    public List<ConsumerRecord> poll(Duration timeout) {
        ensureOpen();
        if (states.isEmpty() && membership == null) {
            throw new IllegalStateException("no partition is assigned; call assign or subscribe first");
        }
        long deadlineNanos = System.nanoTime() + Math.min(timeout.toNanos(), TimeUnit.DAYS.toNanos(365));
        maybeAutoCommit(clock.millis());
        for (int round = 0; ; round++) {
            long nowMs = clock.millis();
            if (membership != null) {
                membership.heartbeatIfDue(nowMs, changes);
            }
            initPositionsInPoll(nowMs);
            List<ConsumerRecord> records = drainBuffered();
            if (!records.isEmpty()) {
                startFetches(nowMs, config.fetchMaxWaitMs());
                return records;
            }
            long remainingNanos = deadlineNanos - System.nanoTime();
            if ((round > 0 && remainingNanos <= 0) || Thread.currentThread().isInterrupted()) {
                return records;
            }
            startFetches(nowMs, Math.min(config.fetchMaxWaitMs(), TimeUnit.NANOSECONDS.toMillis(Math.max(0,
                    remainingNanos))));
            handle(fetcher.take(Math.min(remainingNanos, nextRetryInNanos(nowMs))));
        }
    }

    /**
     * Starts a fetch of every partition that has nothing buffered and none in flight. A poll that returns records
     * starts them too, before it returns (as Kafka's consumer does): the partitions those records emptied are fetched
     * while the application handles them, so the next poll finds their answers instead of waiting a round trip. Each
     * partition still holds at most one answer, buffered or in flight.
     */
    private void startFetches(long nowMs, long maxWaitMs) {
        List<PartitionState> fetchable = new ArrayList<>();
        for (PartitionState state : states.values()) {
            if (state.fetchable(nowMs)) {
                fetchable.add(state);
            }
        }
        if (!fetchable.isEmpty()) {
            fetcher.start(fetchable, maxWaitMs);
        }
    }

    /**
     * Stops fetching {@code partitions} and returning their records from poll, keeping their positions and what was
     * fetched, until {@link #resume}: an application that cannot take more of a partition for now (flow control).
     */
    public void pause(Collection<TopicPartition> partitions) {
        partitions.forEach(tp -> state(tp).paused = true);
    }

    public void resume(Collection<TopicPartition> partitions) {
        partitions.forEach(tp -> state(tp).paused = false);
    }

    /**
     * Moves {@code tp}'s position to {@code offset}; the next poll reads from there, of whichever topic has the name
     * (the answer pins its id).
     */
    public void seek(TopicPartition tp, long offset) {
        state(tp).seek(offset, Optional.empty());
    }

    /**
     * Moves {@code tp}'s position to {@code offset} of the topic of id {@code topicId}, and pins the partition to
     * it: a topic of the name with another id is never read (UNKNOWN_TOPIC_ID). A position out of the log resets by
     * {@code auto.offset.reset} within the same topic, so with {@code earliest}, offset 0 reads the topic from its
     * log start.
     */
    public void seek(TopicPartition tp, long offset, UUID topicId) {
        state(tp).seek(offset, Optional.of(topicId));
    }

    /** The id of the topic {@code tp} is pinned to; empty before a fetch answered or a seek with an id. */
    public Optional<UUID> topicId(TopicPartition tp) {
        return state(tp).topicId();
    }

    /** Moves the positions to each partition's log start offset. */
    public void seekToBeginning(Collection<TopicPartition> partitions) {
        seekBy(partitions, OffsetSpec.earliest());
    }

    /** Moves the positions to each partition's log end offset: only records produced from now on. */
    public void seekToEnd(Collection<TopicPartition> partitions) {
        seekBy(partitions, OffsetSpec.latest());
    }

    /** Moves the positions to the first record whose ReceiveTime is at or after {@code receiveTimeMs}, else the log end. */
    public void seekToReceiveTime(Collection<TopicPartition> partitions, long receiveTimeMs) {
        seekBy(partitions, OffsetSpec.receiveTime(receiveTimeMs));
    }

    /** Moves the positions to the first record, in log order, whose SendTime is at or after {@code sendTimeMs}, else the log end. */
    public void seekToSendTime(Collection<TopicPartition> partitions, long sendTimeMs) {
        seekBy(partitions, OffsetSpec.sendTime(sendTimeMs));
    }

    /**
     * The next offset poll returns for {@code tp}; looks it up (committed offset or reset) when there is none,
     * retrying a retriable failure (no leader at the moment, a broker unreachable) for up to {@code request.timeout.ms}.
     *
     * @throws TidemarkException the last failure when the lookup did not succeed in time, or a non-retriable one
     */
    public long position(TopicPartition tp) {
        PartitionState state = state(tp);
        if (!state.hasPosition()) {
            Retry.within(clock, config.requestTimeoutMs(), config.retryBackoffMs()).run(this::initPositions);
        }
        return state.position();
    }

    /**
     * The offset after the last record of {@code tp} a consumer may read, as its leader answered the last fetch; empty
     * before one was answered. With the position it gives the partition's lag without a call to the cluster.
     */
    public OptionalLong highWatermark(TopicPartition tp) {
        long known = state(tp).highWatermark;
        return known == PartitionState.UNKNOWN ? OptionalLong.empty() : OptionalLong.of(known);
    }

    /**
     * The consumer's group and, while subscribed, its member id and epoch: what a transactional producer sends with
     * this consumer's offsets ({@link TidemarkProducer#sendOffsetsToTransaction}).
     *
     * @throws IllegalStateException without a group
     */
    public ConsumerGroupMetadata groupMetadata() {
        ensureOpen();
        return membership != null ? membership.metadata() : new ConsumerGroupMetadata(group(), "", 0);
    }

    /** Commits the current position of every assigned partition that has one, with no metadata. */
    public void commitSync() {
        commitSync(currentPositions());
    }

    /**
     * Commits {@code offsets} for the group and waits for the broker to store them. A retriable failure (the group
     * offsets' partition is electing a leader, a broker is unreachable, a call was cut) is retried every
     * {@code retry.backoff.ms} for up to {@code request.timeout.ms} ({@link Retry}), as a commit of the same offsets
     * may safely be repeated; then the last failure is thrown.
     */
    public void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets) {
        Retry.within(clock, config.requestTimeoutMs(), config.retryBackoffMs())
                .run(() -> GrpcFutures.await(commitAsync(offsets)));
    }

    /** Commits the current positions without waiting; the future fails with a TidemarkException. */
    public CompletableFuture<Void> commitAsync() {
        return commitAsync(currentPositions());
    }

    /**
     * Commits {@code offsets} without waiting. While subscribed, as this member, to the group's coordinator: a
     * partition the group gave to another member is refused (STALE_MEMBER_EPOCH), as is every commit of a member the
     * group fenced (UNKNOWN_MEMBER_ID).
     */
    public CompletableFuture<Void> commitAsync(Map<TopicPartition, OffsetAndMetadata> offsets) {
        ensureOpen();
        if (membership != null) {
            return GrpcFutures.unwrapped(membership.commit(Map.copyOf(offsets)));
        }
        return groupOffsets.commit(group(), Map.copyOf(offsets));
    }

    /** The group's committed offsets of {@code partitions}; a partition never committed is absent. */
    public Map<TopicPartition, OffsetAndMetadata> committed(Set<TopicPartition> partitions) {
        ensureOpen();
        if (partitions.isEmpty()) {
            return Map.of();
        }
        return GrpcFutures.await(groupOffsets.fetch(group(), partitions));
    }

    /**
     * Leaves the group when subscribed ({@link #unsubscribe}: the listener hears its partitions revoked first), then
     * shuts the channels down, cancelling fetches in flight. Commits nothing itself. Later calls do nothing.
     */
    @Override
    public void close() {
        if (!closed) {
            try {
                unsubscribe();
            } finally {
                closed = true;
                channels.closeNow();
            }
        }
    }

    /**
     * Commits the positions of {@code partitions} when auto commit is on, tells the listener, which may commit them
     * too, then stops reading them. A failed auto commit is logged: the group then resumes them from the last commit.
     */
    private void revoke(Set<TopicPartition> partitions) {
        if (partitions.isEmpty()) {
            return;
        }
        if (autoCommit) {
            Map<TopicPartition, OffsetAndMetadata> positions = new LinkedHashMap<>(currentPositions());
            positions.keySet().retainAll(partitions);
            try {
                if (!positions.isEmpty()) {
                    commitSync(positions);
                }
            } catch (TidemarkException e) {
                LOG.warn("auto commit of {} before giving them up failed: {}", positions.keySet(), e.getMessage());
            }
        }
        listener.onPartitionsRevoked(partitions);
        states.keySet().removeAll(partitions);
    }

    /**
     * Commits every position without waiting when subscribed with enable.auto.commit and auto.commit.interval.ms has
     * passed: what the polls before this one returned. A failure is logged; the next interval commits again.
     */
    private void maybeAutoCommit(long nowMs) {
        if (membership == null || !autoCommit || nowMs < nextAutoCommitAtMs) {
            return;
        }
        nextAutoCommitAtMs = nowMs + config.autoCommitIntervalMs();
        Map<TopicPartition, OffsetAndMetadata> positions = currentPositions();
        if (!positions.isEmpty()) {
            commitAsync(positions).whenComplete((ignored, error) -> {
                if (error != null) {
                    LOG.warn("auto commit of {} failed: {}", positions.keySet(), error.getMessage());
                }
            });
        }
    }

    private void seekBy(Collection<TopicPartition> partitions, OffsetSpec spec) {
        ensureOpen();
        Map<PartitionState, CompletableFuture<ListOffsetsResponse>> lookups = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            lookups.put(state(tp), leaders.listOffsets(tp, spec));
        }
        applyLookups(lookups, (state, offset) -> state.seek(offset, Optional.empty()));
    }

    /**
     * Waits for every lookup, moves each partition that got an answer with {@code move}, then throws the first
     * failure.
     */
    private static void applyLookups(Map<PartitionState, CompletableFuture<ListOffsetsResponse>> lookups,
                                     ObjLongConsumer<PartitionState> move) {
        RuntimeException failure = null;
        for (Map.Entry<PartitionState, CompletableFuture<ListOffsetsResponse>> lookup : lookups.entrySet()) {
            try {
                move.accept(lookup.getKey(), OffsetLookup.of(GrpcFutures.await(lookup.getValue())).position());
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure;
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Looks up the missing positions unless a retriable failure of the last lookup is still in its backoff; a
     * retriable failure starts the backoff (the partitions without a position wait, the others go on), any other is
     * thrown.
     */
    private void initPositionsInPoll(long nowMs) {
        if (nowMs < positionsRetryAtMs) {
            return;
        }
        try {
            initPositions();
        } catch (TidemarkException e) {
            if (!e.retriable()) {
                throw e;
            }
            LOG.debug("looking up positions failed, retrying after retry.backoff.ms: {}", e.toString());
            positionsRetryAtMs = nowMs + config.retryBackoffMs();
        }
    }

    /**
     * Gives every partition without a position its committed offset, else one by auto.offset.reset, keeping its pinned
     * topic id (a reset after OFFSET_OUT_OF_RANGE stays in the topic it read).
     */
    private void initPositions() {
        List<PartitionState> missing = states.values().stream().filter(s -> !s.hasPosition()).toList();
        if (missing.isEmpty()) {
            return;
        }
        List<TopicPartition> mayUseCommitted = missing.stream().filter(s -> !s.resetOnly()).map(s -> s.partition)
                .toList();
        if (config.group().isPresent() && !mayUseCommitted.isEmpty()) {
            GrpcFutures.await(groupOffsets.fetch(config.group().get(), mayUseCommitted))
                    .forEach((tp, committed) -> states.get(tp).reset(committed.offset()));
        }
        if (config.autoOffsetReset() == ConsumerConfig.OffsetReset.NONE) {
            List<TopicPartition> without = missing.stream().filter(s -> !s.hasPosition()).map(s -> s.partition)
                    .toList();
            if (!without.isEmpty()) {
                throw new TidemarkException(ErrorCode.OFFSET_OUT_OF_RANGE, "no position for " + without + ": no "
                        + "committed offset, or the position fell out of the log, and auto.offset.reset=none; seek them");
            }
            return;
        }
        OffsetSpec reset = config.autoOffsetReset() == ConsumerConfig.OffsetReset.EARLIEST ? OffsetSpec.earliest()
                : OffsetSpec.latest();
        Map<PartitionState, CompletableFuture<ListOffsetsResponse>> lookups = new LinkedHashMap<>();
        for (PartitionState state : missing) {
            if (!state.hasPosition()) {
                lookups.put(state, leaders.listOffsets(state.partition, reset));
            }
        }
        applyLookups(lookups, PartitionState::reset);
    }

    /** Up to max.poll.records buffered records, starting with a different partition each poll for fairness. */
    private List<ConsumerRecord> drainBuffered() {
        List<PartitionState> order = new ArrayList<>(states.values());
        if (order.isEmpty()) {
            return List.of();
        }
        int start = Math.floorMod(drainRotation++, order.size());
        List<ConsumerRecord> records = new ArrayList<>();
        for (int i = 0; i < order.size() && records.size() < config.maxPollRecords(); i++) {
            PartitionState state = order.get((start + i) % order.size());
            while (records.size() < config.maxPollRecords() && !state.paused && !state.buffered.isEmpty()) {
                records.add(state.next());
            }
        }
        return records;
    }

    /** Handles every answer, then throws the first failure (so no answer is lost to an earlier one's error). */
    private void handle(List<Fetcher.FetchAnswer> answers) {
        RuntimeException failure = null;
        for (Fetcher.FetchAnswer answer : answers) {
            try {
                handle(answer);
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure;
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private void handle(Fetcher.FetchAnswer answer) {
        PartitionState state = answer.state();
        state.fetching = false;
        if (states.get(state.partition) != state || state.position() != answer.offset()
                || !state.topicId().equals(answer.pin())) {
            return; // unassigned, or moved or pinned by a seek while the fetch was in flight
        }
        if (answer.error() == null) {
            state.highWatermark = answer.response().getHighWatermark();
            TopicIds.optional(answer.response().getTopicId()).ifPresent(state::answeredBy);
            Fetcher.Fetched fetched = fetcher.records(state.partition, answer.offset(), answer.response());
            state.buffered.addAll(fetched.records());
            if (fetched.records().isEmpty()) {
                state.passOver(fetched.nextOffset());
            }
            return;
        }
        TidemarkException error = answer.error();
        if (error.code() == ErrorCode.UNKNOWN_TOPIC_ID) {
            state.stop();
            throw new TidemarkException(error.code(), "fetch of " + state.partition + " at offset " + answer.offset()
                    + ": " + error.getMessage() + "; the partition is not read until it is sought");
        } else if (error.code() == ErrorCode.OFFSET_OUT_OF_RANGE) {
            LOG.info("position {} of {} is out of range ({}); resetting it by auto.offset.reset={}",
                    answer.offset(), state.partition, error.getMessage(), config.autoOffsetReset());
            state.lose();
        } else if (error.retriable()) {
            // Not a Retry: every partition fetches on its own within one poll, and a failed one waits out its own
            // backoff while the others go on; the poll's timeout bounds the wait, and the next poll tries again.
            LOG.debug("fetch of {} failed, retrying after retry.backoff.ms: {}", state.partition, error);
            state.retryAtMs = clock.millis() + config.retryBackoffMs();
        } else {
            throw error;
        }
    }

    /** Nanos until the earliest partition in backoff may be fetched again; long max when none waits. */
    private long nextRetryInNanos(long nowMs) {
        long next = positionsRetryAtMs > nowMs && states.values().stream().anyMatch(s -> !s.hasPosition())
                ? TimeUnit.MILLISECONDS.toNanos(positionsRetryAtMs - nowMs) : Long.MAX_VALUE;
        if (membership != null) {
            next = Math.min(next, TimeUnit.MILLISECONDS.toNanos(Math.max(0, membership.nextHeartbeatAtMs() - nowMs)));
        }
        for (PartitionState state : states.values()) {
            if (!state.fetching && state.hasPosition() && state.buffered.isEmpty() && state.retryAtMs > nowMs) {
                next = Math.min(next, TimeUnit.MILLISECONDS.toNanos(state.retryAtMs - nowMs));
            }
        }
        return next;
    }

    private Map<TopicPartition, OffsetAndMetadata> currentPositions() {
        Map<TopicPartition, OffsetAndMetadata> positions = new LinkedHashMap<>();
        states.values().stream().filter(PartitionState::hasPosition)
                .forEach(s -> positions.put(s.partition, new OffsetAndMetadata(s.position())));
        return positions;
    }

    private String group() {
        return config.group().orElseThrow(() -> new IllegalStateException("no group is configured; set"
                + " ConsumerConfig.Builder.group(...) to commit or read committed offsets"));
    }

    private PartitionState state(TopicPartition tp) {
        ensureOpen();
        PartitionState state = states.get(tp);
        if (state == null) {
            throw new IllegalStateException(tp + " is not assigned to this consumer; assigned: " + states.keySet());
        }
        return state;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the consumer is closed");
        }
    }
}
