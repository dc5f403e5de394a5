package io.tidemark.mirror.sink;

import com.codahale.metrics.MetricRegistry;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.MirrorMetrics;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.Header;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.ProvenanceHeaders;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchReader;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.OriginOffsetResponse;
import io.tidemark.proto.v1.ProduceResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.stream.LongStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A copier against a scripted target: where it resumes, what each batch holds, and what it does after each answer.
 * Answers are completed by the test, on the test's thread.
 */
class PartitionCopierTest {
    private static final TopicPartition SOURCE = new TopicPartition("t", 0);
    private static final TopicPartition TARGET = new TopicPartition("t", 0);
    private static final UUID T_ID = UUID.fromString("0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95");
    private static final OriginPartition ORIGIN = new OriginPartition("A", "t", T_ID, 0);

    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();
    private final MetricRegistry registry = new MetricRegistry();
    private final FakeTarget target = new FakeTarget();
    private final List<String> seeks = new ArrayList<>();
    private PartitionCopier copier;

    /** The target: records each call and leaves its answer to the test. */
    private static final class FakeTarget implements TargetPartitions {
        final List<CompletableFuture<OriginOffsetResponse>> asks = new ArrayList<>();
        final List<OriginPartition> askedFor = new ArrayList<>();
        final List<TopicPartition> partitions = new ArrayList<>();
        final List<List<Record>> batches = new ArrayList<>();
        final List<CompletableFuture<ProduceResponse>> writes = new ArrayList<>();
        final List<PartitionCopier> topicsGone = new ArrayList<>();
        /** How many batches had been written when the copier resumed the partition, at each resume. */
        final List<Integer> resumedAfter = new ArrayList<>();
        int maxInFlight = 1;

        @Override
        public void resume(TopicPartition tp) {
            resumedAfter.add(batches.size());
        }

        @Override
        public int maxInFlight() {
            return maxInFlight;
        }

        @Override
        public CompletableFuture<ProduceResponse> writeDeadLetter(TopicPartition tp, RecordBatchBuilder batch) {
            return write(tp, batch);
        }

        @Override
        public CompletableFuture<ProduceResponse> write(TopicPartition tp, RecordBatchBuilder batch) {
            ByteBuffer built = batch.build();
            assertTrue(RecordBatchFormat.mirrored(built, 0), "every batch is mirrored");
            partitions.add(tp);
            batches.add(new RecordBatchReader().records(built));
            CompletableFuture<ProduceResponse> answer = new CompletableFuture<>();
            writes.add(answer);
            return answer;
        }

        @Override
        public void targetTopicGone(PartitionCopier copier) {
            topicsGone.add(copier);
        }

        @Override
        public CompletableFuture<OriginOffsetResponse> originOffset(TopicPartition tp, OriginPartition origin) {
            CompletableFuture<OriginOffsetResponse> answer = new CompletableFuture<>();
            asks.add(answer);
            askedFor.add(origin);
            return answer;
        }

        /** Origin offsets of the records of each batch written, in order. */
        List<List<Long>> originOffsets() {
            return batches.stream().map(records -> records.stream()
                    .map(r -> ProvenanceHeaders.read(r.headers()).orElseThrow().originOffset()).toList()).toList();
        }

        void stored(int write, long baseOffset) {
            writes.get(write).complete(ProduceResponse.newBuilder().setBaseOffset(baseOffset)
                    .setLastOffset(baseOffset + batches.get(write).size() - 1).setReceiveTimeMs(5_000).build());
        }

        void refused(int write, ErrorCode code) {
            writes.get(write).completeExceptionally(new TidemarkException(code, "refused"));
        }

        void refused(int write, ErrorCode code, String message) {
            writes.get(write).completeExceptionally(new TidemarkException(code, message));
        }
    }

    private PartitionCopier start(OriginOffsetResponse held) {
        return start(held, Optional.empty());
    }

    private PartitionCopier start(OriginOffsetResponse held, Optional<TopicPartition> deadLetters) {
        copier = new PartitionCopier(ORIGIN, TARGET, "B", 1 << 20, deadLetters, target,
                (c, generation, offset) -> seeks.add(generation + "@" + offset), timers, new MirrorMetrics(registry));
        copier.start();
        target.asks.get(target.asks.size() - 1).complete(held);
        copier.positioned(1);
        return copier;
    }

    private static OriginOffsetResponse held(long originOffset, long offset) {
        return OriginOffsetResponse.newBuilder().setHeld(true).setOriginOffset(originOffset).setOffset(offset).build();
    }

    private static List<ConsumerRecord> records(long... offsets) {
        return LongStream.of(offsets).mapToObj(o -> record(o, List.of())).toList();
    }

    private static ConsumerRecord record(long offset, List<Header> headers) {
        return new ConsumerRecord("t", 0, offset, null, new byte[] {(byte) offset}, headers, 1_000 + offset,
                2_000 + offset);
    }

    private long count(String counter) {
        return registry.counter(counter).getCount();
    }

    private Object gauge(String name) {
        return registry.getGauges().get(name).getValue();
    }

    @AfterEach
    void stop() {
        timers.shutdownNow();
    }

    @Test
    void resumesAfterWhatTheTargetHoldsWithOneBatchOutstanding() {
        start(held(9, 20));
        assertEquals(List.of("1@10"), seeks);
        copier.offer(records(8, 9, 10, 11));
        copier.offer(records(12, 13));
        assertEquals(List.of(List.of(10L, 11L)), target.originOffsets(), "records held are not sent again; the "
                + "records that came meanwhile wait for the outstanding batch");
        target.stored(0, 21);
        assertEquals(List.of(List.of(10L, 11L), List.of(12L, 13L)), target.originOffsets());
        target.stored(1, 23);
        assertEquals(new OffsetMap.Exact(23, false), copier.translate(12));
        assertEquals(4, registry.meter("mirror.records-copied").getCount());
    }

    @Test
    void batchesGoTogetherUpToTheTargetsLimitAndAreRecordedInWriteOrder() {
        target.maxInFlight = 3;
        start(held(9, 20));
        copier.offer(records(10, 11));
        copier.offer(records(12));
        copier.offer(records(13));
        copier.offer(records(14));
        assertEquals(List.of(List.of(10L, 11L), List.of(12L), List.of(13L)), target.originOffsets(),
                "three unanswered at most; 14 waits");
        target.stored(1, 22);
        assertEquals(9, copier.status().lastOriginOffset(), "12 is stored, but recorded only after 10 and 11");
        assertEquals(3, target.batches.size(), "nothing settled, so nothing more goes");
        target.stored(0, 20);
        assertEquals(12, copier.status().lastOriginOffset());
        assertEquals(new OffsetMap.Exact(22, false), copier.translate(12));
        assertEquals(List.of(14L), target.originOffsets().get(3));
        target.stored(2, 23);
        target.stored(3, 24);
        assertEquals(new OffsetMap.Exact(24, false), copier.translate(14));
        assertEquals(5, registry.meter("mirror.records-copied").getCount());
    }

    @Test
    void aRefusalIsDecidedOnceTheBatchesAfterItAreAnsweredAndTheirRecordsGoAgainBehindItsOwn() {
        target.maxInFlight = 3;
        start(held(9, 20));
        copier.offer(records(10, 11));
        copier.offer(records(12, 13));
        copier.offer(records(14));
        target.refused(0, ErrorCode.INVALID_TIMESTAMP, "SendTime outside");
        copier.offer(records(15));
        assertEquals(3, target.batches.size(), "nothing goes while batches written after the refused one are out");
        target.refused(2, ErrorCode.OUT_OF_ORDER_SEQUENCE, "not sent: the batch written before it failed");
        assertEquals(3, target.batches.size());
        assertEquals(List.of(0), target.resumedAfter, "resumed once, when copying began");
        target.refused(1, ErrorCode.OUT_OF_ORDER_SEQUENCE, "expects sequence 2");
        assertEquals(List.of(10L), target.originOffsets().get(3), "one record per batch, one at a time");
        assertEquals(4, target.batches.size());
        assertEquals(List.of(0, 3), target.resumedAfter, "the refusal decided, the partition is resumed before "
                + "the batches resent");
        target.stored(3, 20);
        assertEquals(List.of(11L), target.originOffsets().get(4));
        target.stored(4, 21);
        assertEquals(List.of(12L, 13L, 14L, 15L), target.originOffsets().get(5), "past the refused batch's records, "
                + "batches are whole again");
        target.stored(5, 22);
        assertEquals(new OffsetMap.Exact(25, false), copier.translate(15));
        assertEquals(1, target.asks.size(), "no resync was needed");
    }

    @Test
    void aBatchTheTargetHoldsSendsTheCopierToAskOnceEveryBatchWrittenIsAnswered() {
        target.maxInFlight = 3;
        start(held(9, 20));
        copier.offer(records(10));
        copier.offer(records(11));
        target.refused(0, ErrorCode.ORIGIN_OFFSET_HELD);
        assertEquals(1, target.asks.size(), "11 is still out");
        target.refused(1, ErrorCode.OUT_OF_ORDER_SEQUENCE);
        assertEquals(2, target.asks.size());
        assertEquals(1, count("mirror.batches-refused-held"));
    }

    @Test
    void aHoldWaitsForEveryBatchInFlight() {
        target.maxInFlight = 3;
        start(held(9, 20));
        copier.offer(records(10));
        copier.offer(records(11));
        CompletableFuture<Void> quiet = copier.hold();
        target.stored(1, 21);
        assertFalse(quiet.isDone(), "10 is still out");
        target.stored(0, 20);
        assertTrue(quiet.isDone());
    }

    @Test
    void aHoldWhileARefusalWaitsForTheBatchesAfterItEndsWhenTheyAreAnswered() {
        target.maxInFlight = 3;
        start(held(9, 20));
        copier.offer(records(10));
        copier.offer(records(11));
        target.refused(0, ErrorCode.INVALID_TIMESTAMP, "SendTime outside");
        CompletableFuture<Void> quiet = copier.hold();
        assertFalse(quiet.isDone(), "11 is still out");
        target.refused(1, ErrorCode.OUT_OF_ORDER_SEQUENCE);
        assertTrue(quiet.isDone(), "the refusal answered before is dropped with the hold");
        assertEquals(2, target.batches.size(), "nothing was resent");
    }

    /** The origin names the source topic's id: what the target holds of another topic of the name does not count. */
    @Test
    void itAsksForAndCopiesItsOriginWithTheSourceTopicsId() {
        start(held(9, 20));
        assertEquals(SOURCE, copier.source());
        assertEquals(List.of(ORIGIN), target.askedFor);
        copier.offer(records(10));
        assertEquals(new ProvenanceHeaders.Provenance(ORIGIN, 10, 2_010, List.of("A")),
                ProvenanceHeaders.read(target.batches.get(0).get(0).headers()).orElseThrow());
    }

    @Test
    void theLagCountsFromTheHighestSourceLogEndSeenToWhatTheTargetHolds() {
        start(held(9, 20));
        assertEquals(new PartitionCopier.Lag(0, OffsetMap.NONE), copier.lag(), "the source's log end is not known");
        copier.sourceLogEndOffset(30);
        assertEquals(new PartitionCopier.Lag(20, 30), copier.lag(), "origin offsets 10 to 29");
        copier.sourceLogEndOffset(25);
        assertEquals(new PartitionCopier.Lag(20, 30), copier.lag(), "an older answer does not lower it");
        copier.offer(records(10, 11, 12));
        target.stored(0, 21);
        assertEquals(new PartitionCopier.Lag(17, 30), copier.lag());
        assertEquals(17, copier.lagRecords());
    }

    @Test
    void nothingHeldStartsAtTheSourcesLogStart() {
        start(OriginOffsetResponse.newBuilder().setHeld(false).build());
        assertEquals(List.of("1@" + SourcePositioner.EARLIEST), seeks);
        copier.offer(records(3, 4));
        assertEquals(List.of(List.of(3L, 4L)), target.originOffsets());
        assertEquals(0, count("mirror.records-skipped-gap"), "nothing was held, so nothing was skipped");
    }

    @Test
    void aBatchTheTargetHoldsSendsTheCopierBackToAskWhereToContinue() {
        start(held(9, 20));
        copier.offer(records(10, 11));
        target.refused(0, ErrorCode.ORIGIN_OFFSET_HELD);
        assertEquals(2, target.asks.size(), "it asks again");
        copier.offer(records(12));
        target.asks.get(1).complete(held(15, 40));
        copier.offer(records(16));
        assertEquals(1, target.batches.size(), "records before the new position are dropped");
        assertEquals(List.of("1@10", "2@16"), seeks);
        copier.positioned(2);
        copier.offer(records(16, 17));
        assertEquals(List.of(16L, 17L), target.originOffsets().get(1));
        assertEquals(1, count("mirror.batches-refused-held"));
    }

    @Test
    void aRecordRefusedAloneStopsThePartitionWithItsReasonAndNothingAfterItIsWritten() {
        start(held(9, 20));
        copier.offer(records(10, 11, 12));
        target.refused(0, ErrorCode.RECORD_TOO_LARGE, "batch of 600000 bytes is above max.batch.bytes 524288");
        target.stored(1, 21);
        target.refused(2, ErrorCode.RECORD_TOO_LARGE, "mirrored batch of 600040 bytes is above max.batch.bytes "
                + "524288 of this topic plus the 40 bytes of its tidemark.origin headers (524328 bytes): its records "
                + "take 600000 bytes as the origin held them");
        copier.offer(records(13, 14));
        copier.sourceLogEndOffset(15);
        assertEquals(List.of(List.of(10L, 11L, 12L), List.of(10L), List.of(11L)), target.originOffsets(),
                "resent one per batch to find the record; nothing after it");
        assertFalse(copier.copying(), "the source loop pauses the partition");
        assertEquals(new CopierStatus(CopyState.STOPPED, 4, 15, 10, 5_000, Optional.of(StopReason.refused(11,
                ErrorCode.RECORD_TOO_LARGE, "mirrored batch of 600040 bytes is above max.batch.bytes 524288 of this "
                        + "topic plus the 40 bytes of its tidemark.origin headers (524328 bytes): its records take "
                        + "600000 bytes as the origin held them"))), copier.status());
        assertEquals(1, count("mirror.records-refused"));
        assertEquals(1, gauge("mirror.partition-stopped.t.0"));
        assertEquals(1L, gauge("mirror.partitions-stopped"));
        copier.release();
        assertEquals(1, target.asks.size(), "a stopped partition stays stopped");
    }

    @Test
    void withADeadLetterTopicARefusedRecordGoesThereOnceAndCopyingGoesOn() {
        TopicPartition deadLetters = new TopicPartition("dead", 0);
        List<Header> own = List.of(new Header("h", new byte[] {7}));
        start(held(9, 20), Optional.of(deadLetters));
        copier.offer(List.of(record(10, own), record(11, List.of())));
        target.refused(0, ErrorCode.INVALID_TIMESTAMP, "SendTime outside");
        target.refused(1, ErrorCode.INVALID_TIMESTAMP, "SendTime outside");
        assertEquals(deadLetters, target.partitions.get(2));
        Record letter = target.batches.get(2).get(0);
        assertEquals(1_010, letter.sendTimeMs());
        assertArrayEquals(new byte[] {10}, letter.value());
        assertEquals(List.of("h", DeadLetterHeaders.ERROR, DeadLetterHeaders.MESSAGE, DeadLetterHeaders.TOPIC,
                DeadLetterHeaders.PARTITION, ProvenanceHeaders.NAME), letter.headers().stream().map(Header::name)
                .toList());
        assertEquals(Optional.of(new DeadLetterHeaders.DeadLetter(TARGET, ErrorCode.INVALID_TIMESTAMP,
                "SendTime outside")), DeadLetterHeaders.read(letter.headers()));
        assertEquals(Optional.of(new ProvenanceHeaders.Provenance(ORIGIN, 10, 2_010, List.of("A"))),
                ProvenanceHeaders.read(letter.headers()), "as the copy would be");
        target.stored(2, 0);
        assertEquals(List.of(11L), target.originOffsets().get(3), "copying goes on after it");
        target.stored(3, 20);
        assertEquals(1, count("mirror.records-dead-lettered"));

        copier.close();
        target.asks.clear();
        start(held(9, 20), Optional.of(deadLetters));
        copier.offer(records(10, 11));
        target.refused(4, ErrorCode.INVALID_TIMESTAMP, "SendTime outside");
        target.refused(5, ErrorCode.INVALID_TIMESTAMP, "SendTime outside");
        target.refused(6, ErrorCode.ORIGIN_OFFSET_HELD, "this partition holds A:t-0 up to origin offset 10");
        assertEquals(List.of(11L), target.originOffsets().get(7), "held there: dead-lettered before, so it goes on");
        assertEquals(2, count("mirror.records-dead-lettered"));
        assertEquals(CopyState.COPYING, copier.status().state());
    }

    @Test
    void aRecordTheDeadLetterTopicRefusesTooStopsThePartition() {
        start(held(9, 20), Optional.of(new TopicPartition("dead", 0)));
        copier.offer(records(10, 11));
        target.refused(0, ErrorCode.RECORD_TOO_LARGE, "too large here");
        target.refused(1, ErrorCode.RECORD_TOO_LARGE, "too large here");
        target.refused(2, ErrorCode.RECORD_TOO_LARGE, "too large there");
        assertEquals(3, target.batches.size());
        assertEquals(Optional.of(StopReason.refused(10, ErrorCode.RECORD_TOO_LARGE, "dead-letter topic dead refused "
                + "it too: too large there; t-0 had refused it: RECORD_TOO_LARGE: too large here")),
                copier.status().stopReason());
    }

    @Test
    void aGoneTargetTopicHoldsTheCopierUntilItsWriteIsAnsweredThenItResyncs() {
        start(held(9, 20));
        copier.offer(records(10));
        target.refused(0, ErrorCode.UNKNOWN_TOPIC, "topic t does not exist");
        assertEquals(List.of(copier), target.topicsGone);
        assertEquals(CopyState.RESYNCHRONISING, copier.status().state());
        copier.offer(records(11));
        assertEquals(1, target.batches.size(), "nothing is written while the topic is made again");

        copier.release();
        target.asks.get(1).complete(OriginOffsetResponse.newBuilder().setHeld(false).build());
        copier.positioned(3);
        copier.offer(records(5, 6));
        assertEquals(List.of(5L, 6L), target.originOffsets().get(1), "the new topic gets the source's log start on");
        CompletableFuture<Void> quiet = copier.hold();
        assertFalse(quiet.isDone(), "a write is outstanding");
        target.stored(1, 0);
        assertTrue(quiet.isDone());
        copier.release();
        assertEquals(List.of("1@10", "3@" + SourcePositioner.EARLIEST), seeks.subList(0, 2));
        assertEquals(3, target.asks.size());
    }

    @Test
    void recordsThatCrossedTheTargetAreSkippedAndGapsCountedAndKeptForTheTarget() {
        start(held(9, 20));
        List<Header> fromB = ProvenanceHeaders.forCopy(List.of(), new OriginPartition("B", "t", T_ID, 0), 1, 1);
        copier.offer(List.of(record(10, fromB), record(11, List.of()), record(15, List.of())));
        assertEquals(List.of(List.of(11L, 15L)), target.originOffsets());
        assertEquals(1, count("mirror.records-skipped-loop"));
        assertEquals(3, count("mirror.records-skipped-gap"));
        assertEquals(List.of(new CopiedPartition.Gap(12, 15)), copier.takeGaps());
        assertEquals(List.of(), copier.takeGaps(), "handed out once");
    }

    @Test
    void aGapAfterAResyncIsKeptToo() {
        start(held(9, 20));
        copier.offer(records(20, 21));
        assertEquals(List.of(new CopiedPartition.Gap(10, 20)), copier.takeGaps(),
                "retention removed 10 to 19 before the copier read them");
    }
}
