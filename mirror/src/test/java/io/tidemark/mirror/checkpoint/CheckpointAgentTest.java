package io.tidemark.mirror.checkpoint;

import com.codahale.metrics.MetricRegistry;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.MirrorMetrics;
import io.tidemark.mirror.sink.CopiedPartition;
import io.tidemark.mirror.sink.OffsetMap;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupPartitionLag;
import io.tidemark.proto.v1.MirrorCheckpoint;
import io.tidemark.proto.v1.MirrorGap;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The checkpoint agent over a scripted source, target and copiers: topic t of A with partitions 0 and 1 copied to t
 * of B, where source offset o is at target offset o + 100 (the copier remembers it all).
 */
class CheckpointAgentTest {
    private static final long NOW_MS = 1_700_000_000_000L;
    private static final TopicPartition T0 = new TopicPartition("t", 0);
    private static final TopicPartition T1 = new TopicPartition("t", 1);
    private static final UUID TOPIC_ID = new UUID(7, 8);

    private final Clock clock = Clock.fixed(Instant.ofEpochMilli(NOW_MS), ZoneOffset.UTC);
    private final MetricRegistry registry = new MetricRegistry();
    private final ScriptedSource source = new ScriptedSource();
    private final ScriptedTarget target = new ScriptedTarget();
    private final RecordingSink sink = new RecordingSink();
    private final Map<TopicPartition, FakeCopier> copiers = new LinkedHashMap<>();
    private final CheckpointAgent agent;

    CheckpointAgentTest() {
        copiers.put(T0, new FakeCopier(T0));
        copiers.put(T1, new FakeCopier(T1));
        agent = new CheckpointAgent(source, target, sink, copiers.values(), Pattern.compile(".*"), "A", "B",
                new MirrorMetrics(registry), clock);
    }

    /** A copier whose translations the test sets; by default source offset o is at target offset o + 100. */
    private static final class FakeCopier implements CopiedPartition {
        private final TopicPartition tp;
        final Map<Long, OffsetMap.Translation> translations = new HashMap<>();
        final List<Gap> gaps = new ArrayList<>();
        long logEnd = -1;

        FakeCopier(TopicPartition tp) {
            this.tp = tp;
        }

        @Override
        public TopicPartition source() {
            return tp;
        }

        @Override
        public TopicPartition target() {
            return tp;
        }

        @Override
        public OriginPartition origin() {
            return new OriginPartition("A", tp.topic(), TOPIC_ID, tp.partition());
        }

        @Override
        public OffsetMap.Translation translate(long committed) {
            return translations.getOrDefault(committed, new OffsetMap.Exact(committed + 100, false));
        }

        @Override
        public void sourceLogEndOffset(long offset) {
            logEnd = offset;
        }

        @Override
        public List<Gap> takeGaps() {
            List<Gap> taken = List.copyOf(gaps);
            gaps.clear();
            return taken;
        }
    }

    private static final class ScriptedSource implements SourceGroups {
        final Map<String, List<GroupPartitionLag>> committed = new LinkedHashMap<>();
        final Set<String> failingGroups = new HashSet<>();
        final Set<TopicPartition> failingLogEnds = new HashSet<>();

        void commit(String group, TopicPartition tp, long offset, long commitTimeMs) {
            committed.computeIfAbsent(group, g -> new ArrayList<>()).removeIf(c -> c.getTopic().equals(tp.topic())
                    && c.getPartition() == tp.partition());
            committed.get(group).add(GroupPartitionLag.newBuilder().setTopic(tp.topic()).setPartition(tp.partition())
                    .setCommittedOffset(offset).setCommitTimeMs(commitTimeMs).build());
        }

        @Override
        public List<String> groups() {
            return List.copyOf(committed.keySet());
        }

        @Override
        public List<GroupPartitionLag> committed(String group) {
            if (failingGroups.contains(group)) {
                throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the group offsets' leader is electing");
            }
            return committed.getOrDefault(group, List.of());
        }

        @Override
        public long logEndOffset(TopicPartition tp) {
            if (failingLogEnds.contains(tp)) {
                throw new TidemarkException(ErrorCode.UNKNOWN_TOPIC, "topic 't' does not exist");
            }
            return 50;
        }

        @Override
        public Optional<ConsumerRecord> recordAt(TopicPartition tp, long offset) {
            return Optional.of(new ConsumerRecord(tp.topic(), tp.partition(), offset, null, null, List.of(),
                    1_000 + offset, 2_000 + offset));
        }
    }

    private static final class ScriptedTarget implements TargetPositions {
        final Set<TopicPartition> failingLookups = new HashSet<>();

        @Override
        public long firstCopyAtOrAbove(TopicPartition tp, OriginPartition origin, long originOffset, long known) {
            if (failingLookups.contains(tp)) {
                throw new TidemarkException(ErrorCode.NOT_LEADER, "not the leader");
            }
            return originOffset + 100;
        }

        @Override
        public long logEndOffset(TopicPartition tp) {
            return 777;
        }
    }

    private static final class RecordingSink implements MirrorStateSink {
        final List<MirrorCheckpoint> checkpoints = new ArrayList<>();
        final List<MirrorGap> gaps = new ArrayList<>();
        boolean gapWritesFail;

        @Override
        public CompletableFuture<?> publish(MirrorCheckpoint checkpoint) {
            checkpoints.add(checkpoint);
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<?> publish(MirrorGap gap) {
            if (gapWritesFail) {
                return CompletableFuture.failedFuture(new TidemarkException(ErrorCode.NOT_AVAILABLE, "starting"));
            }
            gaps.add(gap);
            return CompletableFuture.completedFuture(null);
        }
    }

    /** The checkpoints written in the last round, as GROUP:PARTITION=SOURCE>TARGET, or GROUP:PARTITION=none. */
    private List<String> round() {
        int before = sink.checkpoints.size();
        agent.run();
        return sink.checkpoints.subList(before, sink.checkpoints.size()).stream().map(c -> c.getGroup() + ":"
                + c.getPartition() + "=" + (c.getNoCommit() ? "none" : c.getSourceOffset() + ">" + c.getTargetOffset()
                + (c.getMirrorBehind() ? " behind" : ""))).toList();
    }

    private long failures() {
        return registry.counter("mirror.checkpoint-failures").getCount();
    }

    @Test
    void aPartitionTheGroupNeverCommittedIsCheckpointedAsUncommittedUntilItCommits() {
        source.commit("g", T1, 7, NOW_MS - 500);

        assertEquals(List.of("g:0=none", "g:1=7>107"), round());
        MirrorCheckpoint none = sink.checkpoints.get(0);
        assertEquals(MirrorCheckpoint.newBuilder().setSourceCluster("A").setTargetCluster("B").setGroup("g")
                .setSourceTopic("t").setSourceTopicId(TopicIds.toBytes(TOPIC_ID)).setPartition(0).setTargetTopic("t")
                .setCheckpointTimeMs(NOW_MS).setNoCommit(true)
                .build(), none);
        assertEquals(List.of(), round(), "nothing changed: nothing written");

        source.commit("g", T0, 3, NOW_MS - 200);
        assertEquals(List.of("g:0=3>103"), round());
    }

    @Test
    void aGroupWhoseOffsetsCannotBeReadDoesNotStopTheOthers() {
        source.commit("bad", T0, 1, NOW_MS);
        source.commit("g", T0, 5, NOW_MS);
        source.commit("g", T1, 6, NOW_MS);
        source.failingGroups.add("bad");

        assertEquals(List.of("g:0=5>105", "g:1=6>106"), round());
        assertEquals(1, failures());

        source.failingGroups.clear();
        assertEquals(List.of("bad:0=1>101", "bad:1=none"), round(), "tried again next round");
    }

    @Test
    void aPartitionWhoseTranslationFailsDoesNotStopTheGroupsOtherPartitions() {
        source.commit("g", T0, 5, NOW_MS);
        source.commit("g", T1, 6, NOW_MS);
        copiers.get(T0).translations.put(5L, new OffsetMap.Unknown(40, 140));
        target.failingLookups.add(T0);

        assertEquals(List.of("g:1=6>106"), round());
        assertEquals(1, failures());

        target.failingLookups.clear();
        assertEquals(List.of("g:0=5>105"), round(), "tried again next round");
    }

    @Test
    void aLogEndThatCannotBeReadDoesNotStopTheCheckpoints() {
        source.commit("g", T0, 5, NOW_MS);
        source.failingLogEnds.add(T1);

        assertEquals(List.of("g:0=5>105", "g:1=none"), round());
        assertEquals(50, copiers.get(T0).logEnd);
        assertEquals(-1, copiers.get(T1).logEnd);
        assertEquals(1, failures());
    }

    @Test
    void aPartitionOfWhichTheTargetHoldsNothingResumesAtTheTargetsLogEnd() {
        source.commit("g", T0, 5, NOW_MS);
        source.commit("g", T1, 0, NOW_MS);
        copiers.get(T0).translations.put(5L, new OffsetMap.NothingHeld());
        copiers.get(T1).translations.put(0L, new OffsetMap.NothingHeld());

        assertEquals(List.of("g:0=5>777 behind", "g:1=0>777"), round(),
                "every copy lands after the log end; behind when the group consumed records not copied yet");
        assertEquals(List.of("g:0=5>777 behind"), round(), "behind: written again until the mirror caught up");
    }

    @Test
    void aCopierThatHasNotAskedTheTargetYetIsCheckpointedNextRound() {
        source.commit("g", T0, 5, NOW_MS);
        copiers.get(T0).translations.put(5L, new OffsetMap.NotAnchored());

        assertEquals(List.of("g:1=none"), round(), "it may hold copies of it: the log end would pass over them");
        assertEquals(0, failures());
        copiers.get(T0).translations.clear();
        assertEquals(List.of("g:0=5>105"), round());
    }

    private static MirrorGap gap(int partition, long from, long to) {
        return MirrorGap.newBuilder().setSourceCluster("A").setTargetCluster("B").setSourceTopic("t")
                .setSourceTopicId(TopicIds.toBytes(TOPIC_ID)).setPartition(partition).setTargetTopic("t")
                .setFromOffset(from).setToOffset(to).setRecordedTimeMs(NOW_MS).build();
    }

    @Test
    void gapsAreWrittenOnceAndAFailedWriteIsTriedAgain() {
        copiers.get(T1).gaps.add(new CopiedPartition.Gap(10, 30));
        sink.gapWritesFail = true;
        round();
        assertEquals(List.of(), sink.gaps);

        sink.gapWritesFail = false;
        copiers.get(T0).gaps.add(new CopiedPartition.Gap(5, 6));
        round();
        round();
        assertEquals(List.of(
                gap(0, 5, 6), gap(1, 10, 30)),
                sink.gaps.stream().sorted((x, y) -> Integer.compare(x.getPartition(), y.getPartition())).toList());
    }
}
