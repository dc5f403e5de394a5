package io.tidemark.replication.statemachine;

import com.google.protobuf.InvalidProtocolBufferException;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.ErrorDetail;
import io.tidemark.proto.v1.MetadataCommand;
import io.tidemark.proto.v1.MetadataReply;
import io.tidemark.proto.v1.PartitionAssignment;
import io.tidemark.proto.v1.PartitionGroupRecord;
import io.tidemark.proto.v1.PartitionReassignment;
import io.tidemark.proto.v1.TopicAssignment;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The metadata group's state machine (the controller): the cluster's topics with their config overrides and
 * the replicas of every partition, with the target of a reassignment under way. Entries are
 * {@link MetadataCommand}s; applying one checks it against the state (a topic created twice, an unknown topic or
 * partition, a reassignment that conflicts with the one under way) and answers a {@link MetadataReply}, the same
 * on every member. Each applied change is passed to a {@link Listener}, which starts or stops the partition groups this
 * broker hosts. The state is small and rebuilt by replaying the log at start, so there is no snapshot yet.
 *
 * <p>Topic ids: the broker that submits a create picks the topic's id ({@code TopicAssignment.topic_id}), so every
 * member applies the same. A create written before topics had ids carries none and gets {@link #legacyTopicId}, a
 * name-based UUID of the topic's name and the entry's log index: the same on every member and at every replay, and
 * different for a topic of the same name created again later. An alter keeps the id the topic has.
 *
 * <p>Partition groups: applying a command that places partitions (create, the begin of a reassignment) puts each
 * into a partition group of its replica list ({@link PartitionGroupRegistry}) and records it in the partition's
 * assignment ({@code group_id}, {@code target_group_id}); within a topic, the partitions of one replica list take
 * the list's {@code groups_per_replica_set} slots in turn, and a moving partition takes the slot of its number.
 * Applying a command that unplaces partitions (delete, the completion of a reassignment) forgets the groups no
 * partition names any more. An alter changes only a topic's overrides, whatever else the command carries (the
 * submitter read the assignment a moment earlier).
 *
 * <p>Threading: applied on Ratis' updater thread; {@link #topics()} and {@link #groups()} may be read from any
 * thread.
 */
public final class MetadataStateMachine extends BaseStateMachine {
    /** Told of every applied change, on the applying thread: keep it short. */
    public interface Listener {
        void topicCreated(TopicAssignment topic);

        void topicAltered(TopicAssignment topic);

        void topicDeleted(TopicAssignment topic);

        /** A reassignment began (a target was recorded) or completed (the target became the replicas). */
        void partitionReassigned(TopicAssignment topic, PartitionAssignment before);
    }

    private final Map<String, TopicAssignment> topics = new ConcurrentHashMap<>();
    private final PartitionGroupRegistry groups = new PartitionGroupRegistry();
    private final Listener listener;

    public MetadataStateMachine(Listener listener) {
        this.listener = listener;
    }

    /** The topics, sorted by name. */
    public List<TopicAssignment> topics() {
        return List.copyOf(new TreeMap<>(topics).values());
    }

    public Optional<TopicAssignment> topic(String name) {
        return Optional.ofNullable(topics.get(name));
    }

    /** The partition groups, by replica list and slot. */
    public List<PartitionGroupRecord> groups() {
        return groups.all();
    }

    public Optional<PartitionGroupRecord> group(UUID id) {
        return groups.group(id);
    }

    /** The id a create without one, applied at log index {@code index}, gives topic {@code name}. */
    static UUID legacyTopicId(String name, long index) {
        return UUID.nameUUIDFromBytes((name + "@" + index).getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto entry = trx.getLogEntry();
        MetadataReply reply;
        try {
            reply = apply(MetadataCommand.parseFrom(entry.getStateMachineLogEntry().getLogData().toByteArray()),
                    entry.getIndex());
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("metadata entry " + entry.getIndex() + " is not a MetadataCommand", e);
        }
        if (!updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex())) {
            throw new IllegalStateException("metadata applied index would move back to " + entry.getIndex());
        }
        return CompletableFuture.completedFuture(Message.valueOf(UnsafeByteOperations.unsafeWrap(reply.toByteArray())));
    }

    private MetadataReply apply(MetadataCommand command, long index) {
        switch (command.getCommandCase()) {
            case CREATE_TOPIC -> {
                return createTopic(command.getCreateTopic(), index);
            }
            case ALTER_TOPIC -> {
                TopicAssignment current = topics.get(command.getAlterTopic().getName());
                if (current == null) {
                    return unknown(command.getAlterTopic().getName());
                }
                TopicAssignment topic = current.toBuilder().clearOverrides()
                        .putAllOverrides(command.getAlterTopic().getOverridesMap()).build();
                topics.put(topic.getName(), topic);
                listener.topicAltered(topic);
            }
            case DELETE_TOPIC -> {
                TopicAssignment removed = topics.remove(command.getDeleteTopic());
                if (removed == null) {
                    return unknown(command.getDeleteTopic());
                }
                forgetUnusedGroups();
                listener.topicDeleted(removed);
            }
            case BEGIN_REASSIGNMENT -> {
                return beginReassignment(command.getBeginReassignment(), index);
            }
            case COMPLETE_REASSIGNMENT -> {
                return completeReassignment(command.getCompleteReassignment());
            }
            default -> throw new IllegalStateException("metadata command without a command");
        }
        return MetadataReply.getDefaultInstance();
    }

    private MetadataReply createTopic(TopicAssignment command, long index) {
        TopicAssignment topic = command;
        if (command.getTopicId().isEmpty()) {
            topic = command.toBuilder().setTopicId(TopicIds.toBytes(legacyTopicId(command.getName(), index))).build();
        } else if (command.getTopicId().size() != TopicIds.LENGTH) {
            return error(ErrorCode.INVALID_REQUEST, "create of topic '" + command.getName() + "': "
                    + TopicIds.LENGTH + " bytes of topic id expected, not " + command.getTopicId().size());
        }
        if (topics.containsKey(topic.getName())) {
            return error(ErrorCode.TOPIC_EXISTS, "topic '" + topic.getName() + "' already exists");
        }
        topic = placeInGroups(topic, new PartitionGroupRegistry.NewIds(index));
        topics.put(topic.getName(), topic);
        listener.topicCreated(topic);
        return MetadataReply.getDefaultInstance();
    }

    /** Puts each partition into a group of its replica list: the partitions of one list take its slots in turn. */
    private TopicAssignment placeInGroups(TopicAssignment topic, PartitionGroupRegistry.NewIds ids) {
        int slots = Math.max(1, topic.getGroupsPerReplicaSet());
        Map<List<Integer>, Integer> placed = new HashMap<>();
        TopicAssignment.Builder placedTopic = topic.toBuilder();
        for (int i = 0; i < topic.getPartitionsCount(); i++) {
            PartitionAssignment partition = topic.getPartitions(i);
            int slot = placed.merge(partition.getReplicaNodeIdsList(), 1, Integer::sum) - 1;
            UUID group = groups.groupFor(partition.getReplicaNodeIdsList(), slot % slots, ids);
            placedTopic.setPartitions(i, partition.toBuilder().setGroupId(TopicIds.toBytes(group))
                    .clearTargetGroupId());
        }
        return placedTopic.build();
    }

    /** Forgets the groups that no partition, and no reassignment's target, names any more. */
    private void forgetUnusedGroups() {
        Set<UUID> named = new HashSet<>();
        for (TopicAssignment topic : topics.values()) {
            for (PartitionAssignment partition : topic.getPartitionsList()) {
                named.add(TopicIds.fromBytes(partition.getGroupId()));
                if (!partition.getTargetGroupId().isEmpty()) {
                    named.add(TopicIds.fromBytes(partition.getTargetGroupId()));
                }
            }
        }
        groups.retainOnly(named);
    }

    /** Records the target; the same target again changes nothing, another one is refused while one is pending. */
    private MetadataReply beginReassignment(PartitionReassignment reassignment, long index) {
        TopicAssignment topic = topics.get(reassignment.getTopic());
        MetadataReply unknown = unknown(topic, reassignment);
        if (unknown != null) {
            return unknown;
        }
        PartitionAssignment before = topic.getPartitions(reassignment.getPartition());
        List<Integer> target = reassignment.getReplicaNodeIdsList();
        List<Integer> pending = before.getTargetReplicaNodeIdsList();
        if (!pending.isEmpty() && !pending.equals(target)) {
            return error(ErrorCode.INVALID_REQUEST, "a reassignment of " + name(reassignment) + " to " + pending
                    + " is under way; finish it by asking for " + pending + " again before moving the partition "
                    + "elsewhere");
        }
        if (pending.equals(target)) {
            return MetadataReply.getDefaultInstance();
        }
        UUID targetGroup = groups.groupFor(target, reassignment.getPartition()
                % Math.max(1, reassignment.getGroupsPerReplicaSet()), new PartitionGroupRegistry.NewIds(index));
        reassigned(topic, before, before.toBuilder().addAllTargetReplicaNodeIds(target)
                .setTargetGroupId(TopicIds.toBytes(targetGroup)).build());
        return MetadataReply.getDefaultInstance();
    }

    /** Makes the recorded target the replicas; done already when the replicas are the target and none is pending. */
    private MetadataReply completeReassignment(PartitionReassignment reassignment) {
        TopicAssignment topic = topics.get(reassignment.getTopic());
        MetadataReply unknown = unknown(topic, reassignment);
        if (unknown != null) {
            return unknown;
        }
        PartitionAssignment before = topic.getPartitions(reassignment.getPartition());
        List<Integer> target = reassignment.getReplicaNodeIdsList();
        if (before.getTargetReplicaNodeIdsList().isEmpty() && before.getReplicaNodeIdsList().equals(target)) {
            return MetadataReply.getDefaultInstance();
        }
        if (!before.getTargetReplicaNodeIdsList().equals(target)) {
            return error(ErrorCode.INVALID_REQUEST, "no reassignment of " + name(reassignment) + " to " + target
                    + " is under way (its replicas are " + before.getReplicaNodeIdsList() + ", its target "
                    + before.getTargetReplicaNodeIdsList() + ")");
        }
        reassigned(topic, before, before.toBuilder().clearReplicaNodeIds().addAllReplicaNodeIds(target)
                .clearTargetReplicaNodeIds().setGroupId(before.getTargetGroupId()).clearTargetGroupId().build());
        forgetUnusedGroups();
        return MetadataReply.getDefaultInstance();
    }

    private void reassigned(TopicAssignment topic, PartitionAssignment before, PartitionAssignment after) {
        TopicAssignment changed = topic.toBuilder().setPartitions(before.getPartition(), after).build();
        topics.put(topic.getName(), changed);
        listener.partitionReassigned(changed, before);
    }

    private static MetadataReply unknown(TopicAssignment topic, PartitionReassignment reassignment) {
        if (topic == null) {
            return unknown(reassignment.getTopic());
        }
        if (reassignment.getPartition() < 0 || reassignment.getPartition() >= topic.getPartitionsCount()) {
            return error(ErrorCode.UNKNOWN_PARTITION, "topic '" + topic.getName() + "' has partitions 0 to "
                    + (topic.getPartitionsCount() - 1) + ", not " + reassignment.getPartition());
        }
        return null;
    }

    private static String name(PartitionReassignment reassignment) {
        return reassignment.getTopic() + "-" + reassignment.getPartition();
    }

    private static MetadataReply unknown(String name) {
        return error(ErrorCode.UNKNOWN_TOPIC, "topic '" + name + "' does not exist");
    }

    private static MetadataReply error(ErrorCode code, String message) {
        return MetadataReply.newBuilder().setError(ErrorDetail.newBuilder().setCode(code).setMessage(message)).build();
    }
}
