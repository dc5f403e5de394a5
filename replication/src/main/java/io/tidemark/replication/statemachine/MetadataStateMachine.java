package io.tidemark.replication.statemachine;

import com.google.protobuf.InvalidProtocolBufferException;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.ErrorDetail;
import io.tidemark.proto.v1.MetadataCommand;
import io.tidemark.proto.v1.MetadataReply;
import io.tidemark.proto.v1.PartitionAssignment;
import io.tidemark.proto.v1.PartitionReassignment;
import io.tidemark.proto.v1.TopicAssignment;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
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
 * <p>Threading: applied on Ratis' updater thread; {@link #topics()} may be read from any thread.
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
    private final Listener listener;

    public MetadataStateMachine(Listener listener) {
        this.listener = listener;
    }

    /** The topics, sorted by name. */
    public List<TopicAssignment> topics() {
        return List.copyOf(new TreeMap<>(topics).values());
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
                TopicAssignment topic = command.getAlterTopic().toBuilder().setTopicId(current.getTopicId()).build();
                topics.put(topic.getName(), topic);
                listener.topicAltered(topic);
            }
            case DELETE_TOPIC -> {
                TopicAssignment removed = topics.remove(command.getDeleteTopic());
                if (removed == null) {
                    return unknown(command.getDeleteTopic());
                }
                listener.topicDeleted(removed);
            }
            case BEGIN_REASSIGNMENT -> {
                return beginReassignment(command.getBeginReassignment());
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
        if (topics.putIfAbsent(topic.getName(), topic) != null) {
            return error(ErrorCode.TOPIC_EXISTS, "topic '" + topic.getName() + "' already exists");
        }
        listener.topicCreated(topic);
        return MetadataReply.getDefaultInstance();
    }

    /** Records the target; the same target again changes nothing, another one is refused while one is pending. */
    private MetadataReply beginReassignment(PartitionReassignment reassignment) {
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
        reassigned(topic, before, before.toBuilder().addAllTargetReplicaNodeIds(target).build());
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
                .clearTargetReplicaNodeIds().build());
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
