package io.tidemark.replication.cluster;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.topic.InternalTopicWrites;
import io.tidemark.core.topic.ReplicaListener;
import io.tidemark.core.topic.Topic;
import io.tidemark.core.topic.TopicNames;
import io.tidemark.core.topic.Topics;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MetadataCommand;
import io.tidemark.proto.v1.PartitionAssignment;
import io.tidemark.proto.v1.TopicAssignment;
import io.tidemark.replication.partition.ReplicatedPartition;
import io.tidemark.replication.statemachine.MetadataStateMachine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The topics of a cluster as this broker sees them: changes go through the metadata group ({@link MetadataGroup}),
 * and the view is rebuilt from what the group applies ({@link MetadataStateMachine.Listener}). For each partition
 * this broker replicates, the {@link PartitionReplicas} run its partition group; the others are known only by their
 * replicas and group.
 *
 * <p>Ids: this broker picks a created topic's id and puts it into the create command, so every broker applies the
 * same id ({@link MetadataStateMachine}).
 *
 * <p>Placement: partition {@code p} of a topic goes to {@code rf} brokers in a row of the sorted node ids,
 * starting at {@code (p + hash(topic)) mod n}, so replicas spread evenly; the first is the preferred leader, to
 * which {@link PreferredLeaderBalancer} hands leadership back after an election put it elsewhere. The metadata group
 * puts the partitions of one replica list into that list's partition groups (up to {@code groupsPerReplicaSet}),
 * so with {@code rf} consecutive brokers a cluster of {@code n} brokers has {@code n} replica lists per
 * replication factor, each led by a different broker.
 *
 * <p>Thread-safe.
 */
public final class ReplicatedTopics implements Topics, MetadataStateMachine.Listener {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicatedTopics.class);
    private static final Duration APPLY_WAIT = Duration.ofSeconds(30);

    private final ClusterMembers members;
    private final int maxPartitionsPerTopic;
    private final int maxPartitionsPerCluster;
    private final int groupsPerReplicaSet;
    private final PartitionReplicas replicas;
    private final MetadataGroup metadata;
    private final ReplicaListener replicaListener;
    private final Supplier<UUID> ids;
    private final Map<String, Topic> topics = new ConcurrentHashMap<>();

    /**
     * @param replicaListener told of the partitions whose replica this broker starts or stops holding
     * @param groupsPerReplicaSet how many partition groups the partitions of one replica list spread over
     * @param ids             the id of each topic this broker creates; {@code UUID::randomUUID} but in tests
     */
    public ReplicatedTopics(ClusterMembers members, int maxPartitionsPerTopic, int maxPartitionsPerCluster,
                            int groupsPerReplicaSet,
                            PartitionReplicas replicas, MetadataGroup metadata, ReplicaListener replicaListener,
                            Supplier<UUID> ids) {
        this.members = members;
        this.maxPartitionsPerTopic = maxPartitionsPerTopic;
        this.maxPartitionsPerCluster = maxPartitionsPerCluster;
        this.groupsPerReplicaSet = groupsPerReplicaSet;
        this.replicas = replicas;
        this.metadata = metadata;
        this.replicaListener = replicaListener;
        this.ids = ids;
    }

    @Override
    public Topic create(String name, int partitions, int replicationFactor, Map<String, String> overrides) {
        TopicNames.checkUserTopic(name);
        return createTopic(name, partitions, replicationFactor, overrides);
    }

    /**
     * Creates an internal topic unless it exists; an existing one missing some of {@code overrides} (created by an
     * older broker, e.g. {@code __group_offsets} before it was compacted) takes them.
     */
    public Topic ensureInternal(String name, int partitions, Map<String, String> overrides) {
        Topic existing = topics.get(name);
        if (existing != null) {
            if (existing.overrides().entrySet().containsAll(overrides.entrySet())) {
                return existing;
            }
            Map<String, String> updated = new HashMap<>(existing.overrides());
            updated.putAll(overrides);
            LOG.info("Internal topic {} takes the configuration of this version: {}", name, updated);
            return setOverrides(name, updated);
        }
        try {
            return createTopic(name, partitions, Math.min(3, members.all().size()), overrides);
        } catch (TidemarkException e) {
            if (e.code() == ErrorCode.TOPIC_EXISTS) {
                return awaitTopic(name);
            }
            throw e;
        }
    }

    private Topic createTopic(String name, int partitions, int replicationFactor, Map<String, String> overrides) {
        int brokers = members.all().size();
        if (partitions < 1 || partitions > maxPartitionsPerTopic) {
            throw new TidemarkException(ErrorCode.INVALID_REQUEST, "a topic needs 1 to " + maxPartitionsPerTopic
                    + " partitions (max.partitions.per.topic), not " + partitions);
        }
        int held = topics().stream().mapToInt(topic -> topic.partitions().size()).sum();
        if (held + partitions > maxPartitionsPerCluster) {
            throw new TidemarkException(ErrorCode.INVALID_REQUEST, "topic '" + name + "' with " + partitions
                    + " partitions would bring the cluster to " + (held + partitions) + " partitions; it may have at "
                    + "most " + maxPartitionsPerCluster + " (max.partitions.per.cluster), and has " + held);
        }
        int factor = replicationFactor == 0 ? Math.min(3, brokers) : replicationFactor;
        if (factor < 1 || factor > brokers) {
            throw new TidemarkException(ErrorCode.INVALID_REPLICATION_FACTOR, "replication factor " + factor
                    + " is not possible: this cluster has " + brokers + " broker(s), so a topic can have 1 to " + brokers
                    + " replicas");
        }
        replicas.effectiveConfig(overrides);
        UUID id = ids.get();
        TopicAssignment.Builder assignment = TopicAssignment.newBuilder().setName(name)
                .setTopicId(TopicIds.toBytes(id)).setReplicationFactor(factor).putAllOverrides(overrides)
                .setGroupsPerReplicaSet(groupsPerReplicaSet);
        List<Integer> nodes = members.nodeIds();
        int start = Math.floorMod(name.hashCode(), nodes.size());
        for (int p = 0; p < partitions; p++) {
            PartitionAssignment.Builder partition = PartitionAssignment.newBuilder().setPartition(p);
            for (int i = 0; i < factor; i++) {
                partition.addReplicaNodeIds(nodes.get((start + p + i) % nodes.size()));
            }
            assignment.addPartitions(partition);
        }
        metadata.submitAndApply(MetadataCommand.newBuilder().setCreateTopic(assignment).build(), APPLY_WAIT,
                "topic " + name + " (id " + id + ") to be applied here");
        return topic(name);
    }

    @Override
    public void delete(String name) {
        topic(name);
        InternalTopicWrites.checkChange(name, "delete");
        metadata.submitAndApply(MetadataCommand.newBuilder().setDeleteTopic(name).build(), APPLY_WAIT,
                "the deletion of topic " + name);
    }

    @Override
    public Topic alterConfig(String name, Map<String, String> set, Collection<String> remove) {
        Topic topic = topic(name);
        InternalTopicWrites.checkChange(name, "alter the configuration of");
        Map<String, String> overrides = new HashMap<>(topic.overrides());
        remove.forEach(overrides::remove);
        overrides.putAll(set);
        return setOverrides(name, overrides);
    }

    /** Replaces a topic's overrides through the metadata group and waits until this broker applied them. */
    private Topic setOverrides(String name, Map<String, String> overrides) {
        replicas.effectiveConfig(overrides);
        TopicAssignment current = metadata.assignment(name);
        metadata.submitAndApply(MetadataCommand.newBuilder().setAlterTopic(current.toBuilder().clearOverrides()
                .putAllOverrides(overrides)).build(), APPLY_WAIT, "the new config of topic " + name);
        return topic(name);
    }

    private Topic awaitTopic(String name) {
        metadata.await(() -> topics.containsKey(name), APPLY_WAIT, "topic " + name + " to be applied here");
        return topics.get(name);
    }

    @Override
    public Topic topic(String name) {
        Topic topic = topics.get(name);
        if (topic == null) {
            throw Topic.unknown(name);
        }
        return topic;
    }

    @Override
    public List<Topic> topics() {
        return topics.values().stream().sorted(Comparator.comparing(Topic::name)).toList();
    }

    /**
     * The config of a topic the metadata group applied: when this broker cannot take its overrides (another broker's
     * defaults allowed them, or a key only a newer broker knows), this broker's defaults, said loudly. Applying a
     * metadata command must never fail on one broker.
     */
    private TopicConfig appliedConfig(TopicAssignment assignment) {
        try {
            return replicas.effectiveConfig(assignment.getOverridesMap());
        } catch (TidemarkException e) {
            LOG.error("Topic {}'s overrides {} are not a config this broker takes ({}); it shows this broker's "
                    + "defaults until they change", assignment.getName(), assignment.getOverridesMap(),
                    e.getMessage());
            return replicas.effectiveConfig(Map.of());
        }
    }

    @Override
    public void topicCreated(TopicAssignment assignment) {
        TopicConfig config = appliedConfig(assignment);
        UUID topicId = TopicIds.fromBytes(assignment.getTopicId());
        List<Partition> partitions = new ArrayList<>();
        for (PartitionAssignment p : assignment.getPartitionsList()) {
            partitions.add(replicas.open(new TopicPartition(assignment.getName(), p.getPartition()), topicId, p,
                    assignment.getOverridesMap()));
        }
        topics.put(assignment.getName(), new Topic(assignment.getName(), topicId,
                assignment.getReplicationFactor(), assignment.getOverridesMap(), config, partitions));
        partitions.stream().filter(ReplicatedPartition.class::isInstance).forEach(replicaListener::holding);
    }

    @Override
    public void topicAltered(TopicAssignment assignment) {
        Topic topic = topics.get(assignment.getName());
        TopicConfig config = appliedConfig(assignment);
        topic.partitions().forEach(p -> replicas.overridesChanged(topic.id(), p.id().partition(),
                assignment.getOverridesMap()));
        topics.put(assignment.getName(), new Topic(topic.name(), topic.id(), topic.replicationFactor(),
                assignment.getOverridesMap(), config, topic.partitions()));
    }

    @Override
    public void topicDeleted(TopicAssignment assignment) {
        Topic removed = topics.remove(assignment.getName());
        if (removed != null) {
            removed.partitions().stream().filter(ReplicatedPartition.class::isInstance)
                    .forEach(replicaListener::released);
        }
        UUID topicId = TopicIds.fromBytes(assignment.getTopicId());
        for (PartitionAssignment p : assignment.getPartitionsList()) {
            replicas.released(new TopicPartition(assignment.getName(), p.getPartition()), topicId, p);
        }
    }

    /**
     * A topic's replication factor once a reassignment changed a partition's replica count: partition 0's count, as
     * Kafka's tools show it (the partitions' own replica lists say the rest).
     */
    private static int replicationFactor(TopicAssignment assignment) {
        return assignment.getPartitions(0).getReplicaNodeIdsCount();
    }

    @Override
    public void partitionReassigned(TopicAssignment assignment, PartitionAssignment before) {
        Topic topic = topics.get(assignment.getName());
        TopicPartition id = new TopicPartition(assignment.getName(), before.getPartition());
        List<Partition> partitions = new ArrayList<>(topic.partitions());
        Partition was = partitions.get(id.partition());
        Partition now = replicas.reassigned(id, TopicIds.fromBytes(assignment.getTopicId()), before,
                assignment.getPartitions(id.partition()),
                assignment.getOverridesMap());
        partitions.set(id.partition(), now);
        topics.put(topic.name(), new Topic(topic.name(), topic.id(), replicationFactor(assignment), topic.overrides(),
                topic.config(), partitions));
        if (was instanceof ReplicatedPartition) {
            replicaListener.released(was);
        }
        if (now instanceof ReplicatedPartition) {
            replicaListener.holding(now);
        }
    }
}
