package io.tidemark.replication.partition;

import io.tidemark.core.log.AppendResult;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.topic.Topics;
import io.tidemark.core.txn.AllOrNoneAppender;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.replication.statemachine.GroupEntryFormat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Stores batches all or none in one entry of the partition group that hosts all their partitions
 * ({@link PartitionGroup#appendAllOrNone}), when this broker leads it.
 *
 * <p>Thread-safe.
 */
public final class GroupAllOrNoneAppender implements AllOrNoneAppender {
    private final Topics topics;

    public GroupAllOrNoneAppender(Topics topics) {
        this.topics = topics;
    }

    /**
     * Empty when a partition is not known here, is led elsewhere, sits in another group than the others, or does not
     * admit its batch now (the caller's other way reports that partition's error).
     */
    @Override
    public Optional<CompletableFuture<List<AppendResult>>> append(List<PartitionBatch> batches) {
        PartitionGroup group = null;
        List<GroupEntryFormat.Submitted> submitted = new ArrayList<>(batches.size());
        try {
            for (PartitionBatch batch : batches) {
                Partition partition = topics.partition(batch.partition().topic(), batch.partition().partition());
                if (!(partition instanceof ReplicatedPartition replicated)
                        || (group != null && replicated.group() != group)) {
                    return Optional.empty();
                }
                group = replicated.group();
                submitted.add(replicated.admit(batch.batch()));
            }
        } catch (TidemarkException e) {
            return Optional.empty();
        }
        if (group == null || !group.leads()) {
            return Optional.empty();
        }
        return Optional.of(group.appendAllOrNone(submitted).thenApply(GroupAllOrNoneAppender::appended));
    }

    private static List<AppendResult> appended(List<GroupEntryFormat.Outcome> outcomes) {
        List<AppendResult> results = new ArrayList<>(outcomes.size());
        for (GroupEntryFormat.Outcome outcome : outcomes) {
            if (outcome.refused() != null) {
                throw new Refused(outcome.refused());
            }
            results.add(outcome.appended());
        }
        return results;
    }
}
