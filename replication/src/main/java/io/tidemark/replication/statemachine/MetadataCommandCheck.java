package io.tidemark.replication.statemachine;

import com.google.protobuf.InvalidProtocolBufferException;
import io.tidemark.core.auth.AclBindingRules;
import io.tidemark.core.quota.ClientQuotas;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.AclBinding;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MetadataCommand;
import io.tidemark.proto.v1.PartitionAssignment;
import io.tidemark.proto.v1.PartitionReassignment;
import io.tidemark.proto.v1.TopicAssignment;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What a metadata command must be before the metadata group appends it, so that applying it can only answer (an
 * unknown topic, a topic that exists), never fail: a {@link MetadataCommand} with a command; topic names of the allowed
 * characters; a created topic's partitions numbered from 0, each with replicas (distinct, not negative) and no group
 * (the group picks those), a topic id of 0 or 16 bytes; a reassignment's partition not negative; replicas distinct
 * brokers of the cluster (members of the metadata group); ACL bindings to add valid as stored
 * ({@link AclBindingRules#checked}); quotas valid ({@link ClientQuotas#checked}). Whatever reaches the Raft port could submit one; the brokers submit only such.
 *
 * <p>Stateless.
 */
final class MetadataCommandCheck {
    /** Topic names, internal ones included (TopicNames has the rule users are held to). */
    private static final Pattern NAME = Pattern.compile("[a-zA-Z0-9._-]{1,249}");

    private MetadataCommandCheck() {
    }

    /**
     * The command a request carries, checked.
     *
     * @param brokers the node ids of the cluster's brokers
     * @throws TidemarkException INVALID_REQUEST naming what is wrong
     */
    static MetadataCommand check(ByteString request, Set<Integer> brokers) {
        MetadataCommand command;
        try {
            command = MetadataCommand.parseFrom(request.toByteArray());
        } catch (InvalidProtocolBufferException e) {
            throw invalid("a request that is not a MetadataCommand: " + e.getMessage());
        }
        switch (command.getCommandCase()) {
            case CREATE_TOPIC -> checkCreate(command.getCreateTopic(), brokers);
            case ALTER_TOPIC -> checkName(command.getAlterTopic().getName());
            case DELETE_TOPIC -> checkName(command.getDeleteTopic());
            case BEGIN_REASSIGNMENT -> checkReassignment(command.getBeginReassignment(), brokers);
            case COMPLETE_REASSIGNMENT -> checkReassignment(command.getCompleteReassignment(), brokers);
            case CREATE_ACLS -> command.getCreateAcls().getBindingsList().forEach(MetadataCommandCheck::checkAcl);
            case DELETE_ACLS -> {
            }
            case ALTER_QUOTAS -> command.getAlterQuotas().getQuotasList().forEach(ClientQuotas::checked);
            default -> throw invalid("a MetadataCommand without a command");
        }
        return command;
    }

    private static void checkCreate(TopicAssignment topic, Set<Integer> brokers) {
        checkName(topic.getName());
        if (!topic.getTopicId().isEmpty() && topic.getTopicId().size() != TopicIds.LENGTH) {
            throw invalid("a topic id of " + topic.getTopicId().size() + " bytes for '" + topic.getName() + "'; it "
                    + "has " + TopicIds.LENGTH);
        }
        if (topic.getPartitionsCount() < 1 || topic.getReplicationFactor() < 1 || topic.getGroupsPerReplicaSet() < 0) {
            throw invalid("topic '" + topic.getName() + "' with " + topic.getPartitionsCount() + " partitions, "
                    + "replication factor " + topic.getReplicationFactor() + " and " + topic.getGroupsPerReplicaSet()
                    + " groups per replica set; a topic has 1 or more partitions and replicas");
        }
        for (int i = 0; i < topic.getPartitionsCount(); i++) {
            PartitionAssignment partition = topic.getPartitions(i);
            if (partition.getPartition() != i) {
                throw invalid("partition " + partition.getPartition() + " of '" + topic.getName() + "' in place " + i
                        + "; partitions are numbered from 0 in order");
            }
            checkReplicas(topic.getName() + "-" + i, partition.getReplicaNodeIdsList(), brokers);
            if (!partition.getGroupId().isEmpty() || !partition.getTargetGroupId().isEmpty()
                    || partition.getTargetReplicaNodeIdsCount() > 0) {
                throw invalid("partition " + topic.getName() + "-" + i + " placed in a group or moving; the metadata "
                        + "group places a created topic's partitions itself");
            }
        }
    }

    private static void checkReassignment(PartitionReassignment reassignment, Set<Integer> brokers) {
        checkName(reassignment.getTopic());
        if (reassignment.getPartition() < 0 || reassignment.getGroupsPerReplicaSet() < 0) {
            throw invalid("a reassignment of partition " + reassignment.getPartition() + " over "
                    + reassignment.getGroupsPerReplicaSet() + " groups per replica set; neither may be negative");
        }
        checkReplicas(reassignment.getTopic() + "-" + reassignment.getPartition(),
                reassignment.getReplicaNodeIdsList(), brokers);
    }

    private static void checkReplicas(String partition, List<Integer> replicas, Set<Integer> brokers) {
        if (replicas.isEmpty() || !brokers.containsAll(replicas) || new HashSet<>(replicas).size() != replicas.size()) {
            throw invalid("replicas " + replicas + " for " + partition + "; a partition has 1 or more distinct "
                    + "brokers of the cluster's " + brokers);
        }
    }

    private static void checkAcl(AclBinding binding) {
        if (!AclBindingRules.checked(binding).equals(binding)) {
            throw invalid("ACL binding '" + AclBindingRules.describe(binding) + "' without a host; a stored binding "
                    + "names one (* for any)");
        }
    }

    private static void checkName(String name) {
        if (!NAME.matcher(name).matches()) {
            throw invalid("topic name '" + name + "'; a name is 1 to 249 characters from a-z A-Z 0-9 . _ -");
        }
    }

    private static TidemarkException invalid(String what) {
        return new TidemarkException(ErrorCode.INVALID_REQUEST, "the metadata group refuses " + what
                + ": nothing was appended");
    }
}
