package io.tidemark.replication.verify;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordDigestFormat;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.DigestPartitionRequest;
import io.tidemark.proto.v1.DigestPartitionResponse;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.proto.v1.RangeDigest;
import io.tidemark.replication.verify.PartitionVerdict.Outcome;
import io.tidemark.replication.verify.PartitionVerdict.Target;

import java.security.MessageDigest;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Compares the replicas of a partition: every replica's records from the latest of their log starts to the earliest
 * of their log ends (all committed, since a replica's log holds only applied entries) by offset, ReceiveTime,
 * SendTime, key, value and headers. Each replica digests its records per range of offsets on its broker
 * ({@code DigestPartition}); only a range whose digests differ is read, record by record, to find the first offset
 * at which two replicas differ.
 *
 * <p>Compaction runs on each replica on its own schedule, so where a replica's range is compacted the records two
 * replicas hold may differ in what compaction may remove, and only that ({@link RangeComparison}): a record both hold
 * must be the same; a record one holds and the other compacted away must be one compaction removes, a record with a
 * later record of its key in the compacting replica's log, or a tombstone. A record without a key, or the latest of
 * its key, must be on every replica.
 *
 * <p>A replica behind the others is given time to catch up: the comparison waits, up to {@code catchUpMs}, until every
 * replica's log ends at or past the furthest end the first look found, then compares up to the earliest end. A
 * replica still short of it then is {@link Outcome#BEHIND}, even when what it holds agrees: a follower whose replica
 * of the group had stopped applying for good, voting still, once passed as agreeing over the records it held.
 *
 * <p>The first replica of the target is the reference the others are compared with (its leader, when the caller
 * knows it). Not thread-safe: one verification at a time.
 */
public final class ReplicaVerifier {
    /** Offsets per digest: a range that differs is read whole, so small enough to read quickly, large enough to
     * keep the list of digests short (100 for a million offsets). */
    public static final long DEFAULT_RANGE_OFFSETS = 10_000;

    /** How often the log ends of replicas behind are looked at again while they catch up. */
    static final long CATCH_UP_POLL_MS = 200;

    /** Waits; a test's moves a clock. */
    @FunctionalInterface
    public interface Sleeper {
        void sleep(long ms) throws InterruptedException;
    }

    private final ReplicaReader reader;
    private final long rangeOffsets;
    private final long catchUpMs;
    private final Clock clock;
    private final Sleeper sleeper;

    /**
     * @param catchUpMs how long replicas behind the others are waited for before they are {@link Outcome#BEHIND}
     */
    public ReplicaVerifier(ReplicaReader reader, long rangeOffsets, long catchUpMs, Clock clock, Sleeper sleeper) {
        if (rangeOffsets < 1) {
            throw new IllegalArgumentException("a range holds at least 1 offset, not " + rangeOffsets);
        }
        if (catchUpMs < 0) {
            throw new IllegalArgumentException("a catch-up wait is 0 ms or more, not " + catchUpMs);
        }
        this.reader = reader;
        this.rangeOffsets = rangeOffsets;
        this.catchUpMs = catchUpMs;
        this.clock = clock;
        this.sleeper = sleeper;
    }

    public PartitionVerdict verify(Target target) throws InterruptedException {
        List<String> unread = new ArrayList<>();
        Map<Integer, DigestPartitionResponse> bounds = bounds(target, unread);
        if (!unread.isEmpty()) {
            return notChecked(target, unread);
        }
        long furthest = bounds.values().stream().mapToLong(DigestPartitionResponse::getLogEndOffset).max().orElse(0);
        long deadlineMs = clock.millis() + catchUpMs;
        while (behind(bounds, furthest) && clock.millis() < deadlineMs) {
            sleeper.sleep(Math.min(CATCH_UP_POLL_MS, Math.max(1, deadlineMs - clock.millis())));
            bounds = bounds(target, unread);
            if (!unread.isEmpty()) {
                return notChecked(target, unread);
            }
        }
        List<String> lagging = new ArrayList<>();
        for (int node : target.replicas()) {
            long end = bounds.get(node).getLogEndOffset();
            if (end < furthest) {
                lagging.add("node " + node + " holds offsets up to " + end + ", " + (furthest - end) + " short of "
                        + furthest + ", which another replica held " + catchUpMs + " ms before");
            }
        }
        long from = bounds.values().stream().mapToLong(DigestPartitionResponse::getLogStartOffset).max().orElse(0);
        long to = bounds.values().stream().mapToLong(DigestPartitionResponse::getLogEndOffset).min().orElse(0);
        if (from >= to) {
            return behindOr(new PartitionVerdict(target, Outcome.AGREE, from, Math.max(from, to), 0, "", 0,
                    Optional.empty(), List.of()), lagging);
        }
        Map<Integer, List<RangeDigest>> digests = new HashMap<>();
        for (int node : target.replicas()) {
            try {
                digests.put(node, digests(target, node, from, to));
            } catch (TidemarkException e) {
                unread.add("node " + node + ": " + e.code() + ": " + e.getMessage());
            }
        }
        if (!unread.isEmpty()) {
            return notChecked(target, unread);
        }
        return behindOr(compare(target, from, to, digests), lagging);
    }

    /** Each replica's log bounds; those that cannot be read are added to {@code unread}. */
    private Map<Integer, DigestPartitionResponse> bounds(Target target, List<String> unread) {
        Map<Integer, DigestPartitionResponse> bounds = new HashMap<>();
        for (int node : target.replicas()) {
            try {
                bounds.put(node, reader.digest(node, request(target, 0, 0)));
            } catch (TidemarkException e) {
                unread.add("node " + node + ": " + e.code() + ": " + e.getMessage());
            }
        }
        return bounds;
    }

    private static boolean behind(Map<Integer, DigestPartitionResponse> bounds, long furthest) {
        return bounds.values().stream().anyMatch(b -> b.getLogEndOffset() < furthest);
    }

    /** {@code verdict}, or BEHIND with what it compared when a replica did not catch up and the rest agree. */
    private static PartitionVerdict behindOr(PartitionVerdict verdict, List<String> lagging) {
        if (lagging.isEmpty() || (verdict.outcome() != Outcome.AGREE && verdict.outcome() != Outcome.AGREE_COMPACTED)) {
            return verdict;
        }
        return new PartitionVerdict(verdict.target(), Outcome.BEHIND, verdict.fromOffset(), verdict.toOffset(),
                verdict.records(), verdict.digest(), verdict.compactedAway(), Optional.empty(), lagging);
    }

    private PartitionVerdict compare(Target target, long from, long to, Map<Integer, List<RangeDigest>> digests) {
        int reference = target.replicas().get(0);
        List<RangeDigest> referenceRanges = digests.get(reference);
        MessageDigest summary = RecordDigestFormat.newDigest();
        long records = 0;
        long compactedAway = 0;
        RangeComparison comparison = new RangeComparison(reader, target);
        for (int i = 0; i < referenceRanges.size(); i++) {
            RangeDigest range = referenceRanges.get(i);
            summary.update(range.getDigest().toByteArray());
            records += range.getRecords();
            for (int node : target.replicas().subList(1, target.replicas().size())) {
                RangeDigest other = digests.get(node).get(i);
                if (other.getDigest().equals(range.getDigest())) {
                    continue;
                }
                RangeComparison.Result result;
                try {
                    result = comparison.compare(reference, range, node, other);
                } catch (TidemarkException e) {
                    return notChecked(target, List.of("reading the records of [" + range.getFromOffset() + ", "
                            + range.getToOffset() + "): " + e.code() + ": " + e.getMessage()));
                }
                if (result.difference().isPresent()) {
                    return new PartitionVerdict(target, Outcome.DIFFER, from, to, records, "", compactedAway,
                            result.difference(), List.of());
                }
                compactedAway += result.compactedAway();
            }
        }
        return new PartitionVerdict(target, compactedAway > 0 ? Outcome.AGREE_COMPACTED : Outcome.AGREE, from, to,
                records, HexFormat.of().formatHex(summary.digest()).substring(0, 16), compactedAway, Optional.empty(),
                List.of());
    }

    /**
     * The digests of a replica's records in {@code [from, to)}, asked for until they reach {@code to} (a broker stops
     * a call after a read budget).
     *
     * @throws TidemarkException NOT_AVAILABLE when the replica's log start moved past where the digests go on (its
     *                           retention deleted a segment meanwhile)
     */
    private List<RangeDigest> digests(Target target, int node, long from, long to) {
        List<RangeDigest> ranges = new ArrayList<>();
        long at = from;
        while (at < to) {
            List<RangeDigest> answered = reader.digest(node, request(target, at, to)).getRangesList();
            if (answered.isEmpty() || answered.get(0).getFromOffset() != at) {
                throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "its log no longer "
                        + "starts at or below offset " + at + " (retention deleted a segment during the check); "
                        + "verify again");
            }
            ranges.addAll(answered);
            at = answered.get(answered.size() - 1).getToOffset();
        }
        return ranges;
    }

    private DigestPartitionRequest request(Target target, long from, long to) {
        return DigestPartitionRequest.newBuilder().setGroupId(target.groupId().toString())
                .setTopicId(TopicIds.toBytes(target.topicId())).setPartition(target.partition())
                .setFromOffset(from).setToOffset(to).setRangeOffsets(rangeOffsets).build();
    }

    private static PartitionVerdict notChecked(Target target, List<String> unread) {
        return new PartitionVerdict(target, Outcome.NOT_CHECKED, 0, 0, 0, "", 0, Optional.empty(), unread);
    }

    /** The partition as the replicas' groups name it, for reads. */
    static GroupPartition groupPartition(Target target) {
        return GroupPartition.newBuilder().setTopic(target.topic()).setTopicId(TopicIds.toBytes(target.topicId()))
                .setPartition(target.partition()).build();
    }
}
