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
 * @param notCopied         records the source had that the mirror had not copied, at its last heartbeat: lost with
 *                          the source
 * @param buffer            X; empty when no partition resumes by time
 * @param partitions        every partition of the group's topics on the target, by topic and partition
 */
public record FailoverPlan(String group, String sourceCluster, String targetCluster, long plannedAtMs,
                           OptionalLong sourceLastHeardMs, OptionalLong lastHeartbeatMs, long notCopied,
                           Optional<Buffer> buffer, List<PartitionPlan> partitions) {
    public FailoverPlan {
        Objects.requireNonNull(targetCluster, "targetCluster");
        partitions = List.copyOf(partitions);
        if (buffer.isEmpty() && partitions.stream().anyMatch(p -> p.basis() instanceof ByTime)) {
            throw new IllegalArgumentException("a plan with partitions that resume by time needs a buffer");
        }
    }

    /**
     * One partition's resume position.
     *
     * @param partition     the target partition
     * @param offset        the offset the group resumes at: its committed offset after apply
     * @param logEndOffset  the partition's log end offset when planned
     * @param record        the times of the record at {@code offset}; empty when {@code offset} is the log end offset
     * @param rereads       records the group will read again that it had consumed on the source, estimated (see
     *                      {@link Exact} and {@link ByTime}); in exact mode without a commit rate, the bound
     * @param rereadsAtMost in exact mode, the bound of the re-reads; empty in time mode
     * @param notCopied     records of the source partition the mirror had not copied at its last heartbeat (lost)
     * @param basis         how {@code offset} was found
     */
    public record PartitionPlan(TopicPartition partition, long offset, long logEndOffset, Optional<RecordTimes> record,
                                long rereads, OptionalLong rereadsAtMost, long notCopied, Basis basis) {
        public PartitionPlan {
            Objects.requireNonNull(partition, "partition");
            Objects.requireNonNull(record, "record");
            Objects.requireNonNull(rereadsAtMost, "rereadsAtMost");
            Objects.requireNonNull(basis, "basis");
            if (offset < 0 || offset > logEndOffset || rereads < 0 || notCopied < 0
                    || !rereadsFit(rereads, rereadsAtMost, basis)) {
                throw new IllegalArgumentException("not a partition plan: offset " + offset + ", log end "
                        + logEndOffset + ", " + rereads + " re-reads, at most " + rereadsAtMost + ", " + notCopied
                        + " not copied, " + basis);
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

    /** The two times of a record, ms since the epoch: ReceiveTime on the target, and SendTime. */
    public record RecordTimes(long receiveTimeMs, long sendTimeMs) {
    }

    /** How a partition's offset was found. */
    public sealed interface Basis permits Exact, ByTime {
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
     */
    public record Exact(String sourceTopic, long sourceOffset, long sourceCommitTimeMs, long checkpointTimeMs,
                        boolean mirrorBehind, Optional<CommitRate> commitRate) implements Basis {
        public Exact {
            Objects.requireNonNull(commitRate, "commitRate");
        }
    }

    /**
     * Time mode: the first record whose target ReceiveTime is at or after T - X. {@link PartitionPlan#rereads}
     * estimates the records between T - X and T, which the group had consumed if it had reached T.
     *
     * @param timeMs   T, ms since the epoch
     * @param source   where T comes from
     * @param lookupMs T - X, not below 0: the ReceiveTime looked up
     */
    public record ByTime(long timeMs, TimeSource source, long lookupMs) implements Basis {
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
