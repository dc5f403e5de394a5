package io.tidemark.client.api;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.BrokerInfo;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MetadataRequest;
import io.tidemark.proto.v1.MetadataResponse;
import io.tidemark.proto.v1.PartitionInfo;
import io.tidemark.proto.v1.TopicInfo;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The client's view of the cluster: each topic's partitions and the address of the broker that leads each,
 * refreshed through the Metadata RPC (every topic) on whichever broker answers ({@link AnyBrokerCaller}: the bootstrap
 * brokers, then the others metadata named). Clients refresh it when a topic or leader is unknown and when a broker
 * says the view was stale (NOT_LEADER, UNKNOWN_TOPIC after a create, NOT_AVAILABLE). An answer that names no leader
 * for some partition sends the next refresh to another broker: a broker cut off from the others answers so for
 * every partition while the others elected leaders.
 *
 * <p>A NOT_LEADER answer carries the leader's address as that broker knows it, and the epoch of its leadership (the
 * Raft term of the partition's group it leads in); {@link #notLeader} keeps it as a hint, used while it is newer than
 * what the metadata says, so a lagging metadata answer does not send the retry back to the broker that refused. A
 * refresh naming a leader of the hint's epoch or a later one supersedes it: a hint kept while the metadata named the
 * refusing broker once sent a partition's batches to a dead broker for as long as the refusing one led again after
 * it (it had handed leadership over, the new leader died, and it was elected back: ManyPartitionsIT, issue 23). A hint
 * of an unknown epoch (0: from a broker that does not tell it) is used while the metadata names the refusing broker or
 * none, until the next refresh.
 *
 * <p>Thread-safe: readers see an immutable snapshot through a volatile field; refreshes are coalesced, so many
 * threads asking at once cause one RPC.
 */
final class ClusterMetadata {
    /** Internal topics included: a client may produce to one (a mirror to __mirror_state). */
    private static final MetadataRequest EVERY_TOPIC = MetadataRequest.newBuilder().setIncludeInternal(true).build();
    private final AnyBrokerCaller caller;
    private final Map<TopicPartition, LeaderHint> hints = new ConcurrentHashMap<>();
    private volatile Snapshot snapshot = new Snapshot(Map.of(), Map.of(), 0);
    /** Why the latest refresh failed; null after a refresh that worked. */
    private volatile TidemarkException refreshFailure;
    private CompletableFuture<Void> refreshing;

    ClusterMetadata(AnyBrokerCaller caller) {
        this.caller = caller;
    }

    /** The partition count of {@code topic}, or empty when the metadata does not know the topic. */
    OptionalInt partitionCount(String topic) {
        PartitionInfo[] partitions = snapshot.topics.get(topic);
        return partitions == null ? OptionalInt.empty() : OptionalInt.of(partitions.length);
    }

    /** The address of the broker that leads {@code tp}, or empty when unknown or leaderless. */
    Optional<String> leaderAddress(TopicPartition tp) {
        Snapshot current = snapshot;
        PartitionInfo[] partitions = current.topics.get(tp.topic());
        if (partitions == null || tp.partition() >= partitions.length) {
            return Optional.empty();
        }
        PartitionInfo partition = partitions[tp.partition()];
        String address = current.brokers.get(partition.getLeaderNodeId());
        LeaderHint hint = hints.get(tp);
        if (hint != null && hint.newerThan(partition, address)) {
            return Optional.of(hint.leaderAddress);
        }
        return Optional.ofNullable(address);
    }

    /**
     * Whether an error may only mean that the metadata a call was routed by is stale, so the same call may succeed
     * after a refresh: a retriable one ({@link TidemarkException#retriable()}: the leader moved, or is down or
     * electing), or UNKNOWN_TOPIC or UNKNOWN_PARTITION from a broker that has not applied a topic's creation yet.
     * What a caller does with the last two is its own decision: the producer retries them until its delivery timeout
     * (a topic just created), a {@link PartitionWriter} takes them as the topic being gone.
     */
    static boolean mayBeStale(TidemarkException e) {
        return e.retriable() || e.code() == ErrorCode.UNKNOWN_TOPIC || e.code() == ErrorCode.UNKNOWN_PARTITION;
    }

    /** Counts successful refreshes, so a caller can wait for metadata newer than what it last saw. */
    long version() {
        return snapshot.version;
    }

    /** Notes that {@code refusedBy} answered {@code notLeader} for {@code tp}, naming the leader or not. */
    void notLeader(TopicPartition tp, String refusedBy, TidemarkException notLeader) {
        String leaderAddress = notLeader.leaderAddress();
        if (leaderAddress.isEmpty() || leaderAddress.equals(refusedBy)) {
            hints.remove(tp);
        } else {
            hints.put(tp, new LeaderHint(refusedBy, leaderAddress, notLeader.leaderEpoch()));
        }
    }

    /**
     * Why {@link #leaderAddress} is empty, as the error a call on {@code tp} fails with: the latest refresh's failure
     * when it failed (an unreachable cluster is not an unknown topic), else what the metadata says.
     */
    TidemarkException noLeader(TopicPartition tp) {
        TidemarkException failure = refreshFailure;
        if (failure != null) {
            return new TidemarkException(failure.code(), failure.getMessage());
        }
        PartitionInfo[] partitions = snapshot.topics.get(tp.topic());
        if (partitions == null) {
            return new TidemarkException(ErrorCode.UNKNOWN_TOPIC, "topic " + tp.topic()
                    + " is not in the cluster metadata");
        }
        if (tp.partition() >= partitions.length) {
            return new TidemarkException(ErrorCode.UNKNOWN_PARTITION, "topic " + tp.topic() + " has "
                    + partitions.length + " partitions (0.." + (partitions.length - 1) + "); " + tp + " does not exist");
        }
        return new TidemarkException(ErrorCode.NOT_AVAILABLE, "partition " + tp + " has no leader with a known"
                + " address at the moment");
    }

    /** Starts a refresh, or joins the one under way; the future fails with a TidemarkException. */
    synchronized CompletableFuture<Void> refresh() {
        if (refreshing != null) {
            return refreshing;
        }
        CompletableFuture<Void> started = caller.call("Metadata",
                        channel -> caller.broker(channel).metadata(EVERY_TOPIC))
                .thenAccept(this::update);
        refreshing = started;
        started.whenComplete((ignored, error) -> {
            refreshFailure = error == null ? null : GrpcFutures.asTidemark(error);
            finished(started);
        });
        return started;
    }

    /** Refreshes and waits; throws the TidemarkException of a failed refresh. */
    void refreshNow() {
        GrpcFutures.await(refresh());
    }

    private synchronized void finished(CompletableFuture<Void> refresh) {
        if (refreshing == refresh) {
            refreshing = null;
        }
    }

    private synchronized void update(MetadataResponse response) {
        Map<Integer, String> brokers = new HashMap<>();
        for (BrokerInfo broker : response.getBrokersList()) {
            brokers.put(broker.getNodeId(), broker.getAddress());
        }
        Map<String, PartitionInfo[]> topics = new HashMap<>();
        for (TopicInfo topic : response.getTopicsList()) {
            PartitionInfo[] partitions = new PartitionInfo[topic.getPartitionsCount()];
            for (PartitionInfo partition : topic.getPartitionsList()) {
                int index = partition.getPartition();
                if (index < 0 || index >= partitions.length || partitions[index] != null) {
                    throw new TidemarkException(ErrorCode.INTERNAL_ERROR, "metadata of topic " + topic.getName()
                            + " lists partition " + index + " out of 0.." + (partitions.length - 1) + " or twice");
                }
                partitions[index] = partition;
            }
            topics.put(topic.getName(), partitions);
        }
        snapshot = new Snapshot(Map.copyOf(brokers), Map.copyOf(topics), snapshot.version + 1);
        hints.entrySet().removeIf(e -> !e.getValue().newerThan(partition(e.getKey())));
        caller.learn(brokers.values());
        if (topics.values().stream().flatMap(Arrays::stream).anyMatch(p -> !brokers.containsKey(p.getLeaderNodeId()))) {
            caller.preferAnother();
        }
    }

    /** The partition as the metadata knows it; null when it does not. */
    private PartitionInfo partition(TopicPartition tp) {
        PartitionInfo[] partitions = snapshot.topics.get(tp.topic());
        return partitions == null || tp.partition() >= partitions.length ? null : partitions[tp.partition()];
    }

    /** One immutable view: broker addresses by node id, partitions by topic (index = partition). */
    private record Snapshot(Map<Integer, String> brokers, Map<String, PartitionInfo[]> topics, long version) {
    }

    /** A leader a NOT_LEADER answer named, of the given epoch (0: unknown). */
    private record LeaderHint(String refusedBy, String leaderAddress, long epoch) {
        /** Whether to go to this leader rather than to the one the metadata names ({@code address}, null if none). */
        boolean newerThan(PartitionInfo partition, String address) {
            if (epoch > 0 && partition.getLeaderEpoch() > 0) {
                return epoch > partition.getLeaderEpoch();
            }
            return address == null || address.equals(refusedBy);
        }

        /** Whether the hint survives a refresh that says {@code partition} (null: not in the metadata). */
        boolean newerThan(PartitionInfo partition) {
            return partition != null && epoch > 0 && epoch > partition.getLeaderEpoch()
                    && partition.getLeaderEpoch() > 0;
        }
    }
}
