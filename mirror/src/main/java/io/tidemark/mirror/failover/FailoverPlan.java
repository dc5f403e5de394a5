package io.tidemark.mirror.failover;

import io.tidemark.client.api.TopicPartition;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Where a consumer group resumes on the target cluster after its source cluster died, per partition, and why: the
 * output of {@link FailoverPlanner}, printed by {@link FailoverPlanFormat} and committed by {@link FailoverCommitter}.
 *
 * @param group             the consumer group
 * @param sourceCluster     the dead cluster's name
 * @param targetCluster     the target cluster's own name (cluster.name), else the name its mirror was told; "" when
 *                          neither is known
 * @param plannedAtMs       when the plan was made (the tool's clock)
 * @param sourceLastHeardMs when the mirror last heard from the source (mirror clock); empty when it never did or no
 *                          heartbeat is on the target
 * @param lastHeartbeatMs   the mirror's last heartbeat on the target (mirror clock); empty when there is none
 * @param notCopied         records the source had that the mirror had not copied, at its last heartbeat, over every
 *                          partition it copied: lost with the source (the group's partitions' share is in
 *                          {@link #totals})
 * @param buffer            X; empty when no partition resumes by time
 * @param partitions        every partition of the group's topics on the target, by topic and partition
 * @param uncopied          the source partitions of the group's topics that have no partition on the target to be
 *                          copied to (a target topic with fewer partitions): none of their records is on the target
 * @param targetMembers     the group's live members on the target, as its coordinator there knows them: apply is
 *                          refused while there are any
 */
public record FailoverPlan(String group, String sourceCluster, String targetCluster, long plannedAtMs,
                           OptionalLong sourceLastHeardMs, OptionalLong lastHeartbeatMs, long notCopied,
                           Optional<Buffer> buffer, List<PartitionPlan> partitions, List<MirrorStopped> uncopied,
                           List<TargetMember> targetMembers) {
    public FailoverPlan {
        Objects.requireNonNull(targetCluster, "targetCluster");
        partitions = List.copyOf(partitions);
        uncopied = List.copyOf(uncopied);
        targetMembers = List.copyOf(targetMembers);
        if (buffer.isEmpty() && partitions.stream().anyMatch(p -> p.basis() instanceof ByTime)) {
            throw new IllegalArgumentException("a plan with partitions that resume by time needs a buffer");
        }
    }

    /**
     * A live member of the group on the target.
     *
     * @param host     where its last heartbeat came from (host:port)
     * @param assigned the partitions the group gives it
     */
    public record TargetMember(String memberId, String clientId, String host, List<TopicPartition> assigned) {
        public TargetMember {
            assigned = List.copyOf(assigned);
        }
    }

    /** Whether applying the plan skips records the group had not consumed: {@code apply} does so only when allowed. */
    public boolean skips() {
        return partitions.stream().anyMatch(p -> p.skipped().records() > 0);
    }

    /** The plan's sums over its partitions. */
    public Totals totals() {
        long rereads = 0;
        long skipped = 0;
        boolean skippedKnown = true;
        long notCopied = 0;
        long removed = 0;
        for (PartitionPlan p : partitions) {
            rereads += p.rereads();
            skipped += p.skipped().records();
            skippedKnown &= p.skipped().records() == 0 || p.skipped().positionKnown();
            notCopied += p.lost().notCopied();
            removed += p.lost().removed();
        }
        for (MirrorStopped stopped : uncopied) {
            notCopied += stopped.records();
        }
        return new Totals(rereads, skipped, skippedKnown, notCopied, removed);
    }

    /**
     * The sums of the partitions' accounting.
     *
     * @param skippedKnown false when some partition's skipped records are a bound (its position is unknown)
     */
    public record Totals(long rereads, long skipped, boolean skippedKnown, long notCopied, long removed) {
    }

    /**
     * One partition's resume position and its accounting: of the source partition's records the group had not
     * consumed, each is read on the target, or counted here as skipped (the position passes over it) or lost (never
     * on the target); of those it had consumed, the ones read again are estimated.
     *
     * @param partition     the target partition
     * @param offset        the offset the group resumes at: its committed offset after apply; empty when the group
     *                      has no committed offset on the source partition and gets none ({@link Uncommitted})
     * @param logEndOffset  the partition's log end offset when planned
     * @param record        the times of the record at {@code offset}; empty when {@code offset} is the log end offset
     *                      or empty
     * @param rereads       records the group will read again that it had consumed on the source, estimated (see
     *                      {@link Exact} and {@link ByTime}); in exact mode without a commit rate, the bound
     * @param rereadsAtMost in exact mode, the bound of the re-reads; empty in the other modes
     * @param skipped       records on the target the group had not consumed that {@code offset} passes over
     * @param lost          records the group had not consumed that are not on the target
     * @param basis         how {@code offset} was found
     * @param stopped       the mirror stopped copying into this partition, and why (its records from there on are
     *                      among those not copied); empty when it did not
     */
    public record PartitionPlan(TopicPartition partition, OptionalLong offset, long logEndOffset,
                                Optional<RecordTimes> record, long rereads, OptionalLong rereadsAtMost, Skipped skipped,
                                Lost lost, Basis basis, Optional<MirrorStopped> stopped) {
        public PartitionPlan {
            Objects.requireNonNull(stopped, "stopped");
            Objects.requireNonNull(partition, "partition");
            Objects.requireNonNull(offset, "offset");
            Objects.requireNonNull(record, "record");
            Objects.requireNonNull(rereadsAtMost, "rereadsAtMost");
            Objects.requireNonNull(skipped, "skipped");
            Objects.requireNonNull(lost, "lost");
            Objects.requireNonNull(basis, "basis");
            if (offset.isPresent() == basis instanceof Uncommitted
                    || (offset.isPresent() && (offset.getAsLong() < 0 || offset.getAsLong() > logEndOffset))
                    || rereads < 0 || !rereadsFit(rereads, rereadsAtMost, basis)
                    || (basis instanceof Exact && skipped.records() > 0)) {
                throw new IllegalArgumentException("not a partition plan: offset " + offset + ", log end "
                        + logEndOffset + ", " + rereads + " re-reads, at most " + rereadsAtMost + ", " + skipped + ", "
                        + lost + ", " + basis);
            }
        }

        /** The bound is there in exact mode only, holds the estimate, and is the estimate without a commit rate. */
        private static boolean rereadsFit(long rereads, OptionalLong atMost, Basis basis) {
            if (!(basis instanceof Exact exact)) {
                return atMost.isEmpty();
            }
            return atMost.isPresent() && (exact.commitRate().isPresent() ? rereads <= atMost.getAsLong()
                    : rereads == atMost.getAsLong());
        }

        /** False when the re-reads are only the bound: exact mode without the group's commit rate. */
        public boolean rereadsEstimated() {
            return !(basis instanceof Exact exact) || exact.commitRate().isPresent();
        }
    }

    /**
     * Records the group had not consumed that the resume offset passes over: they are on the target and the group
     * never reads them.
     *
     * @param records       how many: the records from the group's position at its last checkpoint to the resume offset;
     *                      when the position is unknown, at most this many (every record before the resume offset)
     * @param positionKnown false when the group's position on the source is not known (no checkpoint)
     */
    public record Skipped(long records, boolean positionKnown) {
        public static final Skipped NONE = new Skipped(0, true);

        public Skipped {
            if (records < 0) {
                throw new IllegalArgumentException("skipped records " + records + " is negative");
            }
        }
    }

    /**
     * Records of the source partition at or above the group's position that are not on the target, so the group
     * cannot read them.
     *
     * @param notCopied       the source had them and the mirror had not copied them when it last heard from it: lost
     *                        with the source
     * @param removedBySource the source's retention removed them before the mirror read them
     * @param removedOnTarget copies the target's retention removed before the failover
     */
    public record Lost(long notCopied, long removedBySource, long removedOnTarget) {
        public static final Lost NONE = new Lost(0, 0, 0);

        public Lost {
            if (notCopied < 0 || removedBySource < 0 || removedOnTarget < 0) {
                throw new IllegalArgumentException("lost records " + notCopied + ", " + removedBySource + ", "
                        + removedOnTarget + ": none may be negative");
            }
        }

        /** The records removed by retention, on either cluster. */
        public long removed() {
            return removedBySource + removedOnTarget;
        }
    }

    /**
     * A source partition the mirror stopped copying (its partition status), and why.
     *
     * @param sourceTopic  the source topic
     * @param partition    the partition, the same number on both clusters
     * @param sourceOffset the source offset of the record the target refused; empty when the partition has no target
     *                     partition
     * @param code         the error: the target's (RECORD_TOO_LARGE, INVALID_TIMESTAMP, CORRUPT_BATCH), or
     *                     UNKNOWN_PARTITION for a partition with no target partition
     * @param message      what the target said, or why there is no target partition
     * @param records      the records of the source partition the target does not hold, as the mirror last knew
     */
    public record MirrorStopped(String sourceTopic, int partition, OptionalLong sourceOffset, String code,
                                String message, long records) {
        public MirrorStopped {
            Objects.requireNonNull(sourceOffset, "sourceOffset");
        }
    }

    /** The two times of a record, ms since the epoch: ReceiveTime on the target, and SendTime. */
    public record RecordTimes(long receiveTimeMs, long sendTimeMs) {
    }

    /** How a partition's offset was found. */
    public sealed interface Basis permits Exact, ByTime, Uncommitted {
    }

    /**
     * Exact mode: the checkpoint's translated offset, the copy of the first record at or above the group's committed
     * offset on the source. The group may have committed further on the source after the checkpoint; those records
     * are read again: at most every copy of the source partition at or above the checkpoint's offset
     * ({@link PartitionPlan#rereadsAtMost}), estimated from the group's commit rate ({@link PartitionPlan#rereads},
     * {@link FailoverPlanner}).
     *
     * @param sourceTopic        the source topic
     * @param sourceOffset       the group's committed offset on the source at the checkpoint
     * @param sourceCommitTimeMs when the source stored that commit (source clock)
     * @param checkpointTimeMs   when the mirror made the checkpoint (mirror clock)
     * @param mirrorBehind       the group had consumed records the target did not hold yet
     * @param commitRate         the group's commit rate before the checkpoint; empty when unknown
     * @param checkpointOffset   the checkpoint's target offset when the planner resumes elsewhere, at the copy of
     *                           the group's next record a search of the target found: below it, the record there is
     *                           not where the checkpoint says (the target topic was deleted and made again, or the
     *                           checkpoint is wrong); above it, the mirror was behind the group, and every record
     *                           from the checkpoint's offset to the copy is a copy the group consumed on the source;
     *                           empty when the checkpoint's offset was checked and is the resume offset
     */
    public record Exact(String sourceTopic, long sourceOffset, long sourceCommitTimeMs, long checkpointTimeMs,
                        boolean mirrorBehind, Optional<CommitRate> commitRate, OptionalLong checkpointOffset)
            implements Basis {
        public Exact {
            Objects.requireNonNull(commitRate, "commitRate");
            Objects.requireNonNull(checkpointOffset, "checkpointOffset");
        }
    }

    /**
     * Time mode: the first record whose target ReceiveTime is at or after T - X. Where the group has a checkpoint, its
     * position there (the checkpoint's target offset) tells what the offset passes over ({@link PartitionPlan#skipped})
     * and what the group reads again (from the offset to its position, and what it is estimated to have consumed
     * after the checkpoint); without one, {@link PartitionPlan#rereads} estimates the records between T - X and T,
     * which the group had consumed if it had reached T, and the records before the offset may have been unconsumed.
     *
     * @param timeMs   T, ms since the epoch
     * @param source   where T comes from
     * @param lookupMs T - X, not below 0: the ReceiveTime looked up
     * @param position the target offset of the group's position at its last checkpoint; empty without a checkpoint
     */
    public record ByTime(long timeMs, TimeSource source, long lookupMs, OptionalLong position) implements Basis {
        public ByTime {
            Objects.requireNonNull(position, "position");
        }
    }

    /**
     * The group has no committed offset on the source partition (its other partitions of the topic have one): it
     * gets none on the target either, so its reset policy ({@code auto.offset.reset}) applies there as it would have
     * on the source.
     *
     * @param checkpointTimeMs when the mirror read that the group had no commit there (mirror clock)
     */
    public record Uncommitted(long checkpointTimeMs) implements Basis {
    }

    /** Where T comes from. */
    public enum TimeSource {
        /** {@code --time TIME}. */
        GIVEN("given"),
        /** The checkpoint's last consumed record: its ReceiveTime on the source. */
        LAST_CONSUMED("last-consumed"),
        /** When the mirror last heard from the source. */
        SOURCE_SILENT("source-silent");

        private final String label;

        TimeSource(String label) {
            this.label = label;
        }

        /** The name printed and accepted by {@code --time}. */
        public String label() {
            return label;
        }
    }
}
