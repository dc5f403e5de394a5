package io.tidemark.mirror.failover;

import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.OffsetLookup;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.checkpoint.TargetOffsetLookup;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.v1.ErrorCode;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What the failover planner asks of the target cluster: its name, its partitions and the group's live members. {@link #over} answers from a
 * running cluster; tests script it. Every answer about a partition is an {@link OffsetLookup}: {@code found} with the
 * record's times, or not found with {@code offset} the log end offset (a consumer starting there waits for the next
 * record).
 */
public interface TargetFacts {
    /**
     * Most records {@link #onlyCopiesBelow} reads of a running cluster before it answers false (about 100 MB of
     * 1 KiB records, a hundred reads of 1 MiB): the plan must come back while an operator waits.
     */
    long MAX_SCANNED_RECORDS = 100_000;
    /** Bytes each read of {@link #onlyCopiesBelow} asks a running cluster for. */
    int SCAN_READ_BYTES = 1 << 20;
    /** The target's own name (its brokers' cluster.name); empty when it has none. */
    Optional<String> clusterName();

    /** @throws io.tidemark.proto.error.TidemarkException UNKNOWN_TOPIC */
    int partitionCount(String topic);

    /**
     * The record at {@code offset}; not found when {@code offset} is the log end offset (or past it). Below the log
     * start offset (retention removed the record): the record at the log start offset.
     */
    OffsetLookup recordAt(TopicPartition tp, long offset);

    /** The first record whose ReceiveTime is at or after {@code timeMs} (the time index). */
    OffsetLookup firstAtReceiveTime(TopicPartition tp, long timeMs);

    /** A copy of an origin partition's record in a target partition: where it is, and its origin offset. */
    record Copy(long offset, long originOffset) {
    }

    /** The copy of the last origin offset of {@code origin} that {@code tp} holds; empty when it holds none. */
    Optional<Copy> lastCopy(TopicPartition tp, OriginPartition origin);

    /**
     * The record at {@code offset} (from the log start to before the log end) when it is a copy of {@code origin};
     * empty for another origin's copy or a record that is no copy.
     */
    Optional<Copy> copyAt(TopicPartition tp, long offset, OriginPartition origin);

    /** The first copy of {@code origin} in {@code tp} with origin offset at least {@code originOffset}; empty if none. */
    OptionalLong firstCopyAtOrAbove(TopicPartition tp, OriginPartition origin, long originOffset);

    /**
     * Whether every record of {@code tp} from {@code fromOffset} up to {@code toOffset} (not included) is a copy of
     * {@code origin} below origin offset {@code originOffset}; false when one is not, or when there are more than
     * {@link #MAX_SCANNED_RECORDS} to read.
     */
    boolean onlyCopiesBelow(TopicPartition tp, long fromOffset, long toOffset, OriginPartition origin,
                            long originOffset);

    /** The group's live members, as the target's group coordinator knows them; empty for a group it does not know. */
    List<FailoverPlan.TargetMember> members(String group);

    /** The facts of a running cluster, through its admin client. */
    static TargetFacts over(TidemarkAdmin admin) {
        TargetOffsetLookup copies = new TargetOffsetLookup(admin);
        return new TargetFacts() {
            @Override
            public Optional<String> clusterName() {
                return admin.clusterName();
            }

            @Override
            public List<FailoverPlan.TargetMember> members(String group) {
                try {
                    return admin.describeGroup(group).getMembersList().stream().map(m -> new FailoverPlan.TargetMember(
                            m.getMemberId(), m.getClientId(), m.getHost(), m.getAssignmentList().stream()
                            .map(r -> new TopicPartition(r.getTopic(), r.getPartition())).toList())).toList();
                } catch (TidemarkException e) {
                    if (e.code() == ErrorCode.UNKNOWN_GROUP) {
                        return List.of();
                    }
                    throw e;
                }
            }

            @Override
            public int partitionCount(String topic) {
                return admin.metadata(List.of(topic)).getTopics(0).getPartitionsCount();
            }

            @Override
            public OffsetLookup recordAt(TopicPartition tp, long offset) {
                OffsetLookup end = admin.listOffsets(tp, OffsetSpec.latest());
                if (offset >= end.logEndOffset()) {
                    return end;
                }
                long held = Math.max(offset, end.logStartOffset());
                // maxBytes 1: the fetch still returns the whole batch holding the offset.
                ConsumerRecord record = admin.read(tp, held, 1).stream().filter(r -> r.offset() == held)
                        .findFirst().orElseThrow(() -> new IllegalStateException("a read of " + tp + " at " + held
                                + ", below its log end offset " + end.logEndOffset() + ", returned no record there"));
                return new OffsetLookup(true, held, record.receiveTimeMs(), record.sendTimeMs(),
                        end.logStartOffset(), end.logEndOffset());
            }

            @Override
            public OffsetLookup firstAtReceiveTime(TopicPartition tp, long timeMs) {
                return admin.listOffsets(tp, OffsetSpec.receiveTime(timeMs));
            }

            @Override
            public Optional<Copy> lastCopy(TopicPartition tp, OriginPartition origin) {
                OptionalLong held = admin.originOffset(tp, origin);
                if (held.isEmpty()) {
                    return Optional.empty();
                }
                long at = copies.firstCopyAtOrAbove(tp, origin, held.getAsLong()).orElseThrow(() ->
                        new IllegalStateException(tp + " holds " + origin + " up to origin offset "
                                + held.getAsLong() + ", but no copy of it was found"));
                return Optional.of(new Copy(at, held.getAsLong()));
            }

            @Override
            public Optional<Copy> copyAt(TopicPartition tp, long offset, OriginPartition origin) {
                // maxBytes 1: the fetch still returns the whole batch holding the offset.
                return admin.read(tp, offset, 1).stream().filter(r -> r.offset() == offset).findFirst()
                        .flatMap(TargetOffsetLookup::provenance)
                        .filter(p -> p.origin().equals(origin)).map(p -> new Copy(offset, p.originOffset()));
            }

            @Override
            public OptionalLong firstCopyAtOrAbove(TopicPartition tp, OriginPartition origin, long originOffset) {
                return copies.firstCopyAtOrAbove(tp, origin, originOffset);
            }

            @Override
            public boolean onlyCopiesBelow(TopicPartition tp, long fromOffset, long toOffset, OriginPartition origin,
                                           long originOffset) {
                if (toOffset - fromOffset > MAX_SCANNED_RECORDS) {
                    return false;
                }
                long next = fromOffset;
                while (next < toOffset) {
                    long before = next;
                    for (ConsumerRecord record : admin.read(tp, next, SCAN_READ_BYTES)) {
                        if (record.offset() < next) {
                            continue;
                        }
                        if (record.offset() >= toOffset) {
                            return true;
                        }
                        if (TargetOffsetLookup.provenance(record).filter(p -> p.origin().equals(origin)
                                && p.originOffset() < originOffset).isEmpty()) {
                            return false;
                        }
                        next = record.offset() + 1;
                    }
                    if (next == before) {
                        return false;
                    }
                }
                return true;
            }
        };
    }
}
