package io.tidemark.client.api;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.Header;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.v1.ConsumerGroupHeartbeatRequest;
import io.tidemark.proto.v1.ConsumerGroupHeartbeatResponse;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.TopicPartitionRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Pattern;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConsumerTest {
    private static final long START_MS = 1_700_000_000_000L;
    private static final TopicPartition T0 = new TopicPartition("t", 0);
    private static final TopicPartition T1 = new TopicPartition("t", 1);
    private static final TopicPartition U0 = new TopicPartition("u", 0);
    /** The fake's ids: topic t is created first, u second, t again third. */
    private static final UUID T_ID = new UUID(0, 1);
    private static final UUID U_ID = new UUID(0, 3);
    private static final UUID T_RECREATED_ID = new UUID(0, 4);

    private final ManualClock clock = new ManualClock(START_MS);
    private FakeCluster cluster;
    private final List<TidemarkConsumer> consumers = new ArrayList<>();

    @BeforeEach
    void start() {
        cluster = new FakeCluster(1, clock);
        cluster.createTopic("t", 2);
        cluster.createTopic("__group_offsets", 1);
    }

    @AfterEach
    void stop() throws InterruptedException {
        consumers.forEach(TidemarkConsumer::close);
        cluster.close();
    }

    private TidemarkConsumer consumer(Consumer<ConsumerConfig.Builder> settings) {
        ConsumerConfig.Builder builder = ConsumerConfig.builder(cluster.bootstrap()).clock(clock)
                .channelFactory(cluster::channel).fetchMaxWaitMs(20).retryBackoffMs(0)
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST);
        settings.accept(builder);
        TidemarkConsumer consumer = new TidemarkConsumer(builder.build());
        consumers.add(consumer);
        return consumer;
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** Appends one batch to {@code tp} at ReceiveTime {@code receiveTimeMs}, records "v<first>".."v<first+n-1>". */
    private void appendBatch(TopicPartition tp, long receiveTimeMs, int first, long... sendTimesMs) {
        RecordBatchBuilder builder = new RecordBatchBuilder();
        for (int i = 0; i < sendTimesMs.length; i++) {
            int n = first + i;
            builder.append(sendTimesMs[i], bytes("k" + n), bytes("v" + n), List.of(new Header("n", bytes("" + n))));
        }
        clock.set(receiveTimeMs);
        cluster.append(tp, builder.build());
    }

    /** Polls until {@code count} records came, at most 50 polls of 100 ms. */
    private static List<ConsumerRecord> pollFor(TidemarkConsumer consumer, int count) {
        List<ConsumerRecord> records = new ArrayList<>();
        for (int i = 0; i < 50 && records.size() < count; i++) {
            records.addAll(consumer.poll(Duration.ofMillis(100)));
        }
        return records;
    }

    @Test
    void subscribingAgainChangesTheSubscriptionInPlaceAsTheSameMember() {
        TopicPartition t0 = new TopicPartition("t", 0);
        cluster.heartbeatAnswers.add(request -> membership("m1", 1, t0));
        cluster.heartbeatAnswers.add(request -> membership("m1", 2));
        TidemarkConsumer consumer = consumer(b -> b.group("g"));
        consumer.subscribe(List.of("t"), RebalanceListener.NONE);
        consumer.poll(Duration.ofMillis(10));
        assertEquals(Set.of(t0), consumer.assignment());

        consumer.subscribe(Pattern.compile("u.*"), RebalanceListener.NONE);
        consumer.poll(Duration.ofMillis(10));

        List<ConsumerGroupHeartbeatRequest> sent = cluster.heartbeats.subList(0, 2);
        assertEquals(List.of("", "m1"), sent.stream().map(ConsumerGroupHeartbeatRequest::getMemberId).toList(),
                "no leave, no join: the same member");
        assertEquals(List.of(0, 1), sent.stream().map(ConsumerGroupHeartbeatRequest::getMemberEpoch).toList());
        assertTrue(cluster.heartbeats.stream().skip(2).allMatch(h -> h.getMemberId().equals("m1")
                && h.getMemberEpoch() >= 0), "then heartbeats as m1 (one at once after giving t-0 up)");
        assertEquals("u.*", sent.get(1).getSubscription().getPattern(), "sent at once, not after the interval");
        assertEquals(0, sent.get(1).getSubscription().getTopicsCount());
        assertEquals(Set.of(), consumer.assignment(), "the coordinator took t-0 back");
    }

    @Test
    void aMemberTheGroupFencedLosesItsPartitionsAndJoinsAgain() {
        TopicPartition t0 = new TopicPartition("t", 0);
        TopicPartition t1 = new TopicPartition("t", 1);
        cluster.heartbeatAnswers.add(request -> membership("m1", 1, t0, t1));
        cluster.heartbeatAnswers.add(request -> {
            throw new TidemarkException(ErrorCode.UNKNOWN_MEMBER_ID, "group g has no member m1");
        });
        cluster.heartbeatAnswers.add(request -> membership("m2", 3, t1));
        List<String> events = new ArrayList<>();
        TidemarkConsumer consumer = consumer(b -> b.group("g").clientId("c1"));
        consumer.subscribe(List.of("t"), new RebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                events.add("revoked " + new TreeSet<>(partitions.stream().map(String::valueOf).toList()));
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                events.add("assigned " + new TreeSet<>(partitions.stream().map(String::valueOf).toList()));
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> partitions) {
                events.add("lost " + new TreeSet<>(partitions.stream().map(String::valueOf).toList()));
            }
        });

        consumer.poll(Duration.ofMillis(10));
        assertEquals(Set.of(t0, t1), consumer.assignment());
        clock.advance(1_000);
        consumer.poll(Duration.ofMillis(10));

        assertEquals(List.of("assigned [t-0, t-1]", "lost [t-0, t-1]", "assigned [t-1]"), events);
        assertEquals(Set.of(t1), consumer.assignment());
        List<ConsumerGroupHeartbeatRequest> sent = cluster.heartbeats;
        assertEquals(3, sent.size());
        assertEquals(List.of("", "m1", ""), sent.stream().map(ConsumerGroupHeartbeatRequest::getMemberId).toList());
        assertEquals(List.of(0, 1, 0), sent.stream().map(ConsumerGroupHeartbeatRequest::getMemberEpoch).toList());
        assertEquals(List.of(true, false, true), sent.stream().map(ConsumerGroupHeartbeatRequest::hasSubscription)
                .toList(), "the subscription goes with each join, not with every heartbeat");
        assertEquals(2, sent.get(1).getOwned().getPartitionsCount(), "the second heartbeat lists what it owned");
        assertEquals("c1", sent.get(0).getClientId());
        assertTrue(cluster.calls.stream().filter(c -> c.startsWith("ConsumerGroupHeartbeat")).allMatch(
                c -> c.endsWith("@1")), "to the coordinator, the leader of __group_offsets");
    }

    @Test
    void aSubscribedConsumerCommitsItsPositionsEveryIntervalAndBeforeAPartitionIsTakenAway() {
        TopicPartition t0 = new TopicPartition("t", 0);
        appendBatch(t0, START_MS, 0, START_MS, START_MS, START_MS);
        cluster.heartbeatAnswers.add(request -> membership("m1", 1, t0));
        cluster.heartbeatAnswers.add(request -> membership("m1", 1, t0));
        cluster.heartbeatAnswers.add(request -> membership("m1", 2));
        TidemarkConsumer consumer = consumer(b -> b.group("g").autoCommitIntervalMs(5_000));
        consumer.subscribe(List.of("t"), RebalanceListener.NONE);

        assertEquals(3, pollFor(consumer, 3).size());
        assertEquals(null, cluster.groups.getOrDefault("g", Map.of()).get(t0), "nothing committed before the interval");
        appendBatch(t0, clock.millis() + 5_000, 3, START_MS);
        assertEquals(1, pollFor(consumer, 1).size(), "the interval passed: this poll committed what came before");
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.groups.getOrDefault("g", Map.of()).get(t0) != null);
        assertEquals(new OffsetAndMetadata(3, ""), cluster.groups.get("g").get(t0));

        clock.advance(1_000);
        consumer.poll(Duration.ofMillis(10));
        assertEquals(Set.of(), consumer.assignment(), "the group took t-0 away");
        assertEquals(new OffsetAndMetadata(4, ""), cluster.groups.get("g").get(t0),
                "the position was committed before giving it up");
    }

    @Test
    void withNoAutoOffsetResetAPartitionWithoutACommittedOffsetWaitsForASeek() {
        TopicPartition t0 = new TopicPartition("t", 0);
        TopicPartition t1 = new TopicPartition("t", 1);
        appendBatch(t0, START_MS, 0, START_MS, START_MS);
        cluster.groups.put("g", new ConcurrentHashMap<>(Map.of(t1,
                new OffsetAndMetadata(0, ""))));
        TidemarkConsumer consumer = consumer(b -> b.group("g").autoOffsetReset(ConsumerConfig.OffsetReset.NONE));
        consumer.assign(List.of(t0, t1));

        TidemarkException e = assertThrows(TidemarkException.class, () -> consumer.poll(Duration.ofMillis(10)));
        assertEquals(ErrorCode.OFFSET_OUT_OF_RANGE, e.code());
        assertEquals("no position for [t-0]: no committed offset, or the position fell out of the log, and "
                + "auto.offset.reset=none; seek them", e.getMessage());
        assertEquals(0, consumer.position(t1), "t-1 took its committed offset");
        consumer.seek(t0, 1);
        assertEquals(List.of(1L), pollFor(consumer, 1).stream().map(ConsumerRecord::offset).toList());
    }

    /** A coordinator's answer: heartbeat again after 1 s. */
    private static ConsumerGroupHeartbeatResponse membership(String memberId, int epoch, TopicPartition... assigned) {
        ConsumerGroupHeartbeatResponse.Builder answer = ConsumerGroupHeartbeatResponse.newBuilder()
                .setMemberId(memberId).setMemberEpoch(epoch).setHeartbeatIntervalMs(1_000);
        for (TopicPartition tp : assigned) {
            answer.addAssignment(TopicPartitionRef.newBuilder().setTopic(tp.topic()).setPartition(tp.partition()));
        }
        return answer.build();
    }

    private static ConsumerRecord record(TopicPartition tp, int offset, long sendTimeMs, long receiveTimeMs) {
        return new ConsumerRecord(tp.topic(), tp.partition(), offset, bytes("k" + offset), bytes("v" + offset),
                List.of(new Header("n", bytes("" + offset))), sendTimeMs, receiveTimeMs);
    }

    @Test
    void pollReturnsRecordsInOrderWithBothTimes() {
        appendBatch(T0, 1_000, 0, 100, 300, 200);
        appendBatch(T0, 2_000, 3, 50, 2_500);
        TidemarkConsumer consumer = consumer(b -> { });
        consumer.assign(List.of(T0));

        assertEquals(List.of(record(T0, 0, 100, 1_000), record(T0, 1, 300, 1_000), record(T0, 2, 200, 1_000),
                record(T0, 3, 50, 2_000), record(T0, 4, 2_500, 2_000)), pollFor(consumer, 5));
        assertEquals(5, consumer.position(T0));
    }

    @Test
    void aPausedPartitionIsNeitherReturnedNorFetchedUntilResumed() {
        appendBatch(T0, 1_000, 0, 100);
        appendBatch(T1, 1_000, 0, 100);
        TidemarkConsumer consumer = consumer(b -> { });
        consumer.assign(List.of(T0, T1));
        consumer.pause(List.of(T1));
        assertEquals(List.of(record(T0, 0, 100, 1_000)), pollFor(consumer, 1));
        assertEquals(List.of(), consumer.poll(Duration.ofMillis(50)));
        consumer.resume(List.of(T1));
        assertEquals(List.of(record(T1, 0, 100, 1_000)), pollFor(consumer, 1));
    }

    @Test
    void theHighWatermarkIsTheLastFetchAnswers() {
        TidemarkConsumer consumer = consumer(b -> b.maxPollRecords(1));
        consumer.assign(List.of(T0));
        assertEquals(OptionalLong.empty(), consumer.highWatermark(T0), "before any fetch");
        appendBatch(T0, 1_000, 0, 100, 200, 300);

        assertEquals(1, pollFor(consumer, 1).size());
        assertEquals(OptionalLong.of(3), consumer.highWatermark(T0));
        appendBatch(T0, 2_000, 3, 400);
        assertEquals(OptionalLong.of(3), consumer.highWatermark(T0), "buffered records are returned without a fetch");
        assertEquals(3, pollFor(consumer, 3).size());
        assertEquals(OptionalLong.of(4), consumer.highWatermark(T0));
    }

    @Test
    void pollSkipsRecordsBelowThePositionInTheFirstFetchedBatch() {
        appendBatch(T0, 1_000, 0, 100, 200, 300, 400);
        TidemarkConsumer consumer = consumer(b -> { });
        consumer.assign(List.of(T0));
        consumer.seek(T0, 2);

        assertEquals(List.of(record(T0, 2, 300, 1_000), record(T0, 3, 400, 1_000)), pollFor(consumer, 2));
        assertEquals(4, consumer.position(T0));
    }

    @Test
    void pollReturnsAtMostMaxPollRecordsAndKeepsTheRestForTheNextPoll() {
        appendBatch(T0, 1_000, 0, 10, 11, 12, 13, 14);
        TidemarkConsumer consumer = consumer(b -> b.maxPollRecords(2));
        consumer.assign(List.of(T0));

        List<ConsumerRecord> first = pollFor(consumer, 1);
        assertEquals(List.of(0L, 1L), first.stream().map(ConsumerRecord::offset).toList());
        assertEquals(2, consumer.position(T0));
        long fetches = cluster.count("FetchMany");
        assertEquals(List.of(2L, 3L), consumer.poll(Duration.ZERO).stream().map(ConsumerRecord::offset).toList());
        assertEquals(fetches, cluster.count("FetchMany"), "buffered records are returned without fetching");
        assertEquals(List.of(4L), consumer.poll(Duration.ZERO).stream().map(ConsumerRecord::offset).toList());
        await("the poll that emptied the buffer started the next fetch before it returned").atMost(
                Duration.ofSeconds(10)).until(() -> cluster.count("FetchMany") == fetches + 1);
        assertEquals(5, consumer.position(T0));
    }

    /**
     * The partitions a broker leads are read with one FetchMany to it; a partition whose leadership moved is refused
     * NOT_LEADER alone within the call (the others' records still come) and read from its new leader next.
     */
    @Test
    void eachLeaderIsAskedForItsPartitionsInOneCallAndAMovedPartitionFollowsItsLeader() throws Exception {
        cluster.close();
        cluster = new FakeCluster(2, clock);
        cluster.createTopic("t", 3);
        TopicPartition t2 = new TopicPartition("t", 2);
        cluster.lead(t2, 2);
        appendBatch(T0, 1_000, 0, 100);
        appendBatch(T1, 1_000, 0, 200);
        appendBatch(t2, 1_000, 0, 300);
        TidemarkConsumer consumer = consumer(b -> { });
        consumer.assign(List.of(T0, T1, t2));

        assertEquals(Set.of(record(T0, 0, 100, 1_000), record(T1, 0, 200, 1_000), record(t2, 0, 300, 1_000)),
                Set.copyOf(pollFor(consumer, 3)));
        assertTrue(cluster.calls.contains("FetchMany@1") && cluster.calls.contains("FetchMany@2"),
                cluster.calls.toString());
        assertTrue(cluster.calls.stream().noneMatch(call -> call.startsWith("Fetch@")), cluster.calls.toString());

        cluster.lead(T1, 2);
        appendBatch(T0, 2_000, 1, 101);
        appendBatch(T1, 2_000, 1, 201);
        assertEquals(Set.of(record(T0, 1, 101, 2_000), record(T1, 1, 201, 2_000)), Set.copyOf(pollFor(consumer, 2)));
        assertTrue(cluster.errorsSent.stream().anyMatch(e -> e.startsWith("node 1 does not lead t-1")),
                cluster.errorsSent.toString());
    }

    @Test
    void pollFetchesEveryAssignedPartition() {
        appendBatch(T0, 1_000, 0, 100);
        appendBatch(T1, 1_000, 0, 200);
        TidemarkConsumer consumer = consumer(b -> { });
        consumer.assign(List.of(T0, T1));

        List<ConsumerRecord> records = pollFor(consumer, 2);
        assertEquals(Set.of(record(T0, 0, 100, 1_000), record(T1, 0, 200, 1_000)), Set.copyOf(records));
        assertEquals(2, records.size());
    }

    @Test
    void withoutSeekOrCommittedOffsetThePositionFollowsAutoOffsetReset() {
        appendBatch(T0, 1_000, 0, 100, 200, 300);
        TidemarkConsumer latest = consumer(b -> b.autoOffsetReset(ConsumerConfig.OffsetReset.LATEST));
        latest.assign(List.of(T0));
        assertEquals(3, latest.position(T0));
        TidemarkConsumer earliest = consumer(b -> { });
        earliest.assign(List.of(T0));
        assertEquals(0, earliest.position(T0));
    }

    @Test
    void seekToReceiveTimeUsesListOffsetsAndGoesToTheLogEndWhenNothingIsThatLate() {
        appendBatch(T0, 1_000, 0, 10, 20);
        appendBatch(T0, 2_000, 2, 30, 40);
        appendBatch(T0, 3_000, 4, 50);
        TidemarkConsumer consumer = consumer(b -> { });
        consumer.assign(List.of(T0));

        consumer.seekToReceiveTime(List.of(T0), 1_500);
        assertEquals(2, consumer.position(T0));
        assertEquals(1, cluster.count("ListOffsets"));
        assertEquals(List.of(record(T0, 2, 30, 2_000), record(T0, 3, 40, 2_000), record(T0, 4, 50, 3_000)),
                pollFor(consumer, 3));

        consumer.seekToReceiveTime(List.of(T0), 3_001);
        assertEquals(5, consumer.position(T0));
        consumer.seekToReceiveTime(List.of(T0), 0);
        assertEquals(0, consumer.position(T0));
    }

    @Test
    void seekToSendTimeFindsTheFirstRecordInLogOrderAndGoesToTheLogEndWhenNoneIsThatLate() {
        appendBatch(T0, 1_000, 0, 500, 100, 900);
        appendBatch(T0, 2_000, 3, 200);
        TidemarkConsumer consumer = consumer(b -> { });
        consumer.assign(List.of(T0));

        consumer.seekToSendTime(List.of(T0), 800);
        assertEquals(2, consumer.position(T0));
        consumer.seekToSendTime(List.of(T0), 150);
        assertEquals(0, consumer.position(T0));
        consumer.seekToSendTime(List.of(T0), 901);
        assertEquals(4, consumer.position(T0));
        assertEquals(List.of(), consumer.poll(Duration.ofMillis(50)));
    }

    @Test
    void seekToBeginningAndEnd() {
        appendBatch(T0, 1_000, 0, 1, 2, 3);
        TidemarkConsumer consumer = consumer(b -> { });
        consumer.assign(List.of(T0, T1));
        consumer.seekToEnd(List.of(T0, T1));
        assertEquals(3, consumer.position(T0));
        assertEquals(0, consumer.position(T1));
        consumer.seekToBeginning(List.of(T0));
        assertEquals(0, consumer.position(T0));
    }

    @Test
    void commitSyncAndCommittedRoundTripThroughTheGroupService() {
        appendBatch(T0, 1_000, 0, 1, 2, 3);
        TidemarkConsumer consumer = consumer(b -> b.group("g"));
        consumer.assign(List.of(T0, T1));
        assertEquals(Map.of(), consumer.committed(Set.of(T0, T1)));

        assertEquals(3, pollFor(consumer, 3).size());
        consumer.commitSync();
        assertEquals(Map.of(T0, new OffsetAndMetadata(3, ""), T1, new OffsetAndMetadata(0, "")),
                consumer.committed(Set.of(T0, T1)));

        consumer.commitSync(Map.of(T0, new OffsetAndMetadata(1, "replay from 1")));
        assertEquals(Map.of(T0, new OffsetAndMetadata(1, "replay from 1")), consumer.committed(Set.of(T0)));
        consumer.commitAsync(Map.of(T1, new OffsetAndMetadata(0, "async"))).join();
        assertEquals(new OffsetAndMetadata(0, "async"), cluster.groups.get("g").get(T1));

        TidemarkConsumer next = consumer(b -> b.group("g"));
        next.assign(List.of(T0));
        assertEquals(1, next.position(T0), "a new member starts at the committed offset");
        assertEquals(List.of(record(T0, 1, 2, 1_000), record(T0, 2, 3, 1_000)), pollFor(next, 2));
    }

    @Test
    void commitSyncRetriesARetriableFailureAndThrowsTheOthers() {
        TidemarkConsumer consumer = consumer(b -> b.group("g"));
        consumer.assign(List.of(T0));
        cluster.failNext("CommitOffsets", 2, TidemarkException.notLeader("no leader of __group_offsets-0 yet",
                TidemarkException.NO_LEADER, ""));
        consumer.commitSync(Map.of(T0, new OffsetAndMetadata(7, "")));
        assertEquals(new OffsetAndMetadata(7, ""), cluster.groups.get("g").get(T0), "committed on the third try");
        assertEquals(2, cluster.errorsSent.size());

        cluster.failNext("CommitOffsets", 1, new TidemarkException(ErrorCode.INVALID_REQUEST, "offset -2"));
        TidemarkException refused = assertThrows(TidemarkException.class,
                () -> consumer.commitSync(Map.of(T0, new OffsetAndMetadata(8, ""))));
        assertEquals("INVALID_REQUEST: offset -2", refused.toString());
        assertEquals(new OffsetAndMetadata(7, ""), cluster.groups.get("g").get(T0));
    }

    @Test
    void commitSyncRetriesACommitCutByADyingBroker() {
        TidemarkConsumer consumer = consumer(b -> b.group("g"));
        consumer.assign(List.of(T0));
        cluster.cutNext("CommitOffsets", 2);
        consumer.commitSync(Map.of(T0, new OffsetAndMetadata(7, "")));
        assertEquals(new OffsetAndMetadata(7, ""), cluster.groups.get("g").get(T0), "committed on the third try");
        assertEquals(3, cluster.count("CommitOffsets"));
    }

    @Test
    void commitSyncThrowsTheLastRetriableFailureAtRequestTimeout() {
        TidemarkConsumer consumer = consumer(b -> b.group("g").requestTimeoutMs(1_000));
        consumer.assign(List.of(T0));
        consumer.committed(Set.of(T0));
        cluster.callTakesMs = 400;
        for (int i = 1; i <= 5; i++) {
            cluster.failNext("CommitOffsets", 1, new TidemarkException(ErrorCode.NOT_AVAILABLE, "no quorum " + i));
        }
        TidemarkException last = assertThrows(TidemarkException.class, () -> consumer.commitSync(Map.of(T0,
                new OffsetAndMetadata(7, ""))));
        assertEquals(ErrorCode.NOT_AVAILABLE, last.code());
        assertEquals("no quorum 3", last.getMessage(), "attempts at 0, 400 and 800 ms");
        assertEquals(3, cluster.count("CommitOffsets"));
    }

    @Test
    void commitAsyncFailsWithTheTidemarkExceptionItself() {
        TidemarkConsumer consumer = consumer(b -> b.group("g"));
        consumer.assign(List.of(T0));
        cluster.failNext("CommitOffsets", 1, new TidemarkException(ErrorCode.NON_EMPTY_GROUP, "group g has 1 "
                + "member(s)"));
        Throwable error = consumer.commitAsync(Map.of(T0, new OffsetAndMetadata(2, "")))
                .handle((ignored, failure) -> failure).join();
        assertEquals("NON_EMPTY_GROUP: group g has 1 member(s)", assertInstanceOf(TidemarkException.class, error)
                .toString());
    }

    @Test
    void commitWithoutAGroupIsRefused() {
        TidemarkConsumer consumer = consumer(b -> { });
        consumer.assign(List.of(T0));
        IllegalStateException error = assertThrows(IllegalStateException.class, consumer::commitSync);
        assertTrue(error.getMessage().startsWith("no group is configured"), error.getMessage());
    }

    @Test
    void aCorruptFetchedBatchFailsPollWithCorruptBatch() {
        appendBatch(T0, 1_000, 0, 1, 2);
        cluster.corruptFetches = true;
        TidemarkConsumer consumer = consumer(b -> { });
        consumer.assign(List.of(T0));

        TidemarkException error = assertThrows(TidemarkException.class, () -> pollFor(consumer, 1));
        assertEquals(ErrorCode.CORRUPT_BATCH, error.code());
        assertTrue(error.getMessage().startsWith("fetch of t-0 at offset 0: corrupt record batch: CRC32C mismatch"),
                error.getMessage());
        assertEquals(0, consumer.position(T0));
    }

    @Test
    void anOutOfRangePositionIsResetByAutoOffsetReset() {
        appendBatch(T0, 1_000, 0, 1, 2);
        TidemarkConsumer consumer = consumer(b -> { });
        consumer.assign(List.of(T0));
        consumer.seek(T0, 100);

        assertEquals(List.of(record(T0, 0, 1, 1_000), record(T0, 1, 2, 1_000)), pollFor(consumer, 2));
        assertTrue(cluster.errorsSent.contains("offset 100 is outside 0..2"), cluster.errorsSent.toString());
    }

    @Test
    void aRetriableFetchErrorIsRetriedWithinPoll() {
        appendBatch(T0, 1_000, 0, 1);
        cluster.failNext("FetchMany", 4, new TidemarkException(ErrorCode.NOT_AVAILABLE, "leader moving"));
        TidemarkConsumer consumer = consumer(b -> { });
        consumer.assign(List.of(T0));

        assertEquals(List.of(record(T0, 0, 1, 1_000)), pollFor(consumer, 1));
        await("4 fetches cut, the one answered, and the next the poll started as it returned the record").atMost(
                Duration.ofSeconds(10)).until(() -> cluster.count("FetchMany") == 6);
    }

    @Test
    void aLookupOfThePositionThatFindsNoLeaderIsRetriedWithinPoll() {
        appendBatch(T0, 1_000, 0, 1);
        // 3 lookups per attempt (each after a metadata refresh): the first poll attempt fails, the second succeeds
        cluster.failNext("ListOffsets", 4, new TidemarkException(ErrorCode.NOT_AVAILABLE, "no leader elected yet"));
        TidemarkConsumer consumer = consumer(b -> { });
        consumer.assign(List.of(T0));

        assertEquals(List.of(record(T0, 0, 1, 1_000)), pollFor(consumer, 1));
        assertEquals(5, cluster.count("ListOffsets"));
    }

    @Test
    void positionRetriesALookupThatFindsNoLeaderAndPollThrowsOneThatIsNotRetriable() {
        appendBatch(T0, 1_000, 0, 1, 2);
        cluster.failNext("ListOffsets", 4, new TidemarkException(ErrorCode.NOT_AVAILABLE, "no leader elected yet"));
        TidemarkConsumer consumer = consumer(b -> b.autoOffsetReset(ConsumerConfig.OffsetReset.LATEST));
        consumer.assign(List.of(T0));
        assertEquals(2, consumer.position(T0));

        TidemarkConsumer refused = consumer(b -> { });
        refused.assign(List.of(T1));
        cluster.failNext("ListOffsets", 1, new TidemarkException(ErrorCode.INVALID_REQUEST, "no such spec"));
        TidemarkException thrown = assertThrows(TidemarkException.class, () -> refused.poll(Duration.ofMillis(100)));
        assertEquals(ErrorCode.INVALID_REQUEST, thrown.code());
        assertEquals("no such spec", thrown.getMessage());
    }

    @Test
    void aFetchCutByADyingBrokerIsRetriedWithinPoll() {
        appendBatch(T0, 1_000, 0, 1);
        cluster.cutNext("FetchMany", 4);
        TidemarkConsumer consumer = consumer(b -> { });
        consumer.assign(List.of(T0));

        assertEquals(List.of(record(T0, 0, 1, 1_000)), pollFor(consumer, 1));
        await("4 fetches cut, the one answered, and the next the poll started as it returned the record").atMost(
                Duration.ofSeconds(10)).until(() -> cluster.count("FetchMany") == 6);
    }

    private static String unknownTopicId(TopicPartition tp, long offset, UUID asked, UUID now) {
        return "fetch of " + tp + " at offset " + offset + ": topic '" + tp.topic() + "' with id " + asked
                + " was deleted and created again: it has id " + now + " now; the partition is not read until it is "
                + "sought";
    }

    @Test
    void aTopicDeletedAndCreatedAgainStopsItsPartitionOnceAndTheOthersReadOn() {
        cluster.createTopic("u", 1);
        appendBatch(T0, 1_000, 0, 1, 2, 3);
        TidemarkConsumer consumer = consumer(b -> { });
        consumer.assign(List.of(T0, U0));
        assertEquals(Optional.empty(), consumer.topicId(T0), "no fetch answered yet");
        assertEquals(3, pollFor(consumer, 3).size());
        assertEquals(Optional.of(T_ID), consumer.topicId(T0), "pinned by the answer");

        cluster.createTopic("t", 2);
        appendBatch(T0, 2_000, 0, 10, 20, 30, 40);
        appendBatch(U0, 2_000, 0, 7);
        List<ConsumerRecord> records = new ArrayList<>();
        List<TidemarkException> failures = new ArrayList<>();
        for (int i = 0; i < 50 && (records.isEmpty() || failures.isEmpty()); i++) {
            try {
                records.addAll(consumer.poll(Duration.ofMillis(100)));
            } catch (TidemarkException e) {
                failures.add(e);
            }
        }
        assertEquals(List.of(ErrorCode.UNKNOWN_TOPIC_ID), failures.stream().map(TidemarkException::code).toList());
        assertEquals(unknownTopicId(T0, 3, T_ID, T_RECREATED_ID), failures.get(0).getMessage());
        assertEquals(List.of(record(U0, 0, 7, 2_000)), records, "u is read on");
        assertEquals(Optional.of(U_ID), consumer.topicId(U0));
        assertEquals(List.of(), consumer.poll(Duration.ofMillis(100)), "no record of the new t at the old position");
        consumer.assign(List.of(T0, U0));
        assertEquals(List.of(), consumer.poll(Duration.ofMillis(100)), "still assigned: still stopped");
        assertEquals(1, cluster.errorsSent.size(), "t-0 was not fetched again: " + cluster.errorsSent);
        assertEquals(3, consumer.position(T0));

        consumer.seek(T0, 1);
        assertEquals(List.of(record(T0, 1, 20, 2_000), record(T0, 2, 30, 2_000), record(T0, 3, 40, 2_000)),
                pollFor(consumer, 3), "a seek without an id reads the topic the name has now");
        assertEquals(Optional.of(T_RECREATED_ID), consumer.topicId(T0));
    }

    @Test
    void aPartitionAssignedAgainAfterItsTopicWasCreatedAgainStartsOverUnpinned() {
        appendBatch(T0, 1_000, 0, 1);
        TidemarkConsumer consumer = consumer(b -> { });
        consumer.assign(List.of(T0));
        assertEquals(1, pollFor(consumer, 1).size());
        cluster.createTopic("u", 1);
        cluster.createTopic("t", 1);
        appendBatch(T0, 2_000, 0, 5);
        assertThrows(TidemarkException.class, () -> pollFor(consumer, 1));

        consumer.assign(List.of());
        consumer.assign(List.of(T0));
        assertEquals(Optional.empty(), consumer.topicId(T0));
        assertEquals(List.of(record(T0, 0, 5, 2_000)), pollFor(consumer, 1));
        assertEquals(Optional.of(T_RECREATED_ID), consumer.topicId(T0));
    }

    @Test
    void aSeekWithATopicIdPinsItAndAnOutOfRangeResetKeepsThePin() {
        appendBatch(T0, 1_000, 0, 1, 2);
        TidemarkConsumer consumer = consumer(b -> { });
        consumer.assign(List.of(T0));
        consumer.seek(T0, 100, T_ID);
        assertEquals(Optional.of(T_ID), consumer.topicId(T0));
        assertEquals(List.of(record(T0, 0, 1, 1_000), record(T0, 1, 2, 1_000)), pollFor(consumer, 2),
                "reset to the log start by auto.offset.reset=earliest");
        assertEquals(Optional.of(T_ID), consumer.topicId(T0), "the reset kept the pin");

        UUID other = new UUID(7, 7);
        consumer.seek(T0, 0, other);
        TidemarkException refused = assertThrows(TidemarkException.class, () -> pollFor(consumer, 1));
        assertEquals(unknownTopicId(T0, 0, other, T_ID), refused.getMessage());

        consumer.seekToBeginning(List.of(T0));
        assertEquals(Optional.empty(), consumer.topicId(T0), "seekTo* unpins");
        assertEquals(2, pollFor(consumer, 2).size());
        assertEquals(Optional.of(T_ID), consumer.topicId(T0));
    }

    @Test
    void aPartitionNotAssignedCannotBeSought() {
        TidemarkConsumer consumer = consumer(b -> { });
        consumer.assign(List.of(T0));
        assertThrows(IllegalStateException.class, () -> consumer.seek(T1, 0));
        assertThrows(IllegalStateException.class, () -> consumer.position(T1));
    }
}
