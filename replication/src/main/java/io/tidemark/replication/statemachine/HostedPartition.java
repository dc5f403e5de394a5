package io.tidemark.replication.statemachine;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.proto.v1.PartitionState;

import io.tidemark.core.partition.AppendWaiters;

/**
 * A partition a group hosts on this replica: how the group's log names it (with the topic's overrides as the log last
 * set them), its log, and where it stands ({@link PartitionState}: live, moving in, moving out). Long-polling fetches
 * wait in {@link #awaitAppend}.
 *
 * <p>Thread-safe: the state machine appends and changes the state on its updater thread; readers read the log and
 * the state from any thread; fetches wait and stop waiting on any thread.
 */
public final class HostedPartition {
    private final PartitionKey key;
    private volatile GroupPartition partition;
    private final TopicPartition name;
    private final PartitionLog log;
    private volatile PartitionState state;
    private final AppendWaiters appendWaiters = new AppendWaiters();

    HostedPartition(GroupPartition partition, PartitionLog log, PartitionState state) {
        this.key = PartitionKey.of(partition);
        this.partition = partition;
        this.name = new TopicPartition(partition.getTopic(), partition.getPartition());
        this.log = log;
        this.state = state;
    }

    public PartitionKey key() {
        return key;
    }

    /** The partition as the group's log names it, with the overrides the log last set ({@code GroupChange}). */
    public GroupPartition partition() {
        return partition;
    }

    /** Takes overrides a change of the group's log set, and the config this replica makes of them. */
    void reconfigure(GroupPartition overridden, TopicConfig config) {
        partition = overridden;
        log.updateConfig(config);
    }

    public TopicPartition name() {
        return name;
    }

    public PartitionLog log() {
        return log;
    }

    public PartitionState state() {
        return state;
    }

    void state(PartitionState state) {
        this.state = state;
    }

    /** Runs {@code onAppend} at the next batch appended to this partition, or when the replica stops hosting it. */
    public AppendWaiters.Waiter awaitAppend(Runnable onAppend) {
        return appendWaiters.await(onAppend);
    }

    /** A batch was appended, or the partition is going away: wakes the fetches that wait. */
    void signal() {
        appendWaiters.wake();
    }

    @Override
    public String toString() {
        return name + " (" + key + (state == PartitionState.PARTITION_LIVE ? "" : ", " + state) + ")";
    }
}
