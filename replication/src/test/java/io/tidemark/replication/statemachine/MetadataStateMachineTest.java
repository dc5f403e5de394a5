package io.tidemark.replication.statemachine;

import com.google.protobuf.InvalidProtocolBufferException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MetadataCommand;
import io.tidemark.proto.v1.MetadataReply;
import io.tidemark.proto.v1.PartitionAssignment;
import io.tidemark.proto.v1.PartitionReassignment;
import io.tidemark.proto.v1.TopicAssignment;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The reassignment commands of the metadata group, applied as every member applies them. */
class MetadataStateMachineTest {
    private final List<String> changes = new ArrayList<>();
    private final MetadataStateMachine machine = new MetadataStateMachine(new MetadataStateMachine.Listener() {
        @Override
        public void topicCreated(TopicAssignment topic) {
            changes.add("created " + topic.getName());
        }

        @Override
        public void topicAltered(TopicAssignment topic) {
            changes.add("altered " + topic.getName());
        }

        @Override
        public void topicDeleted(TopicAssignment topic) {
            changes.add("deleted " + topic.getName());
        }

        @Override
        public void partitionReassigned(TopicAssignment topic, PartitionAssignment before) {
            PartitionAssignment after = topic.getPartitions(before.getPartition());
            changes.add(topic.getName() + "-" + before.getPartition() + " " + before.getReplicaNodeIdsList()
                    + before.getTargetReplicaNodeIdsList() + " -> " + after.getReplicaNodeIdsList()
                    + after.getTargetReplicaNodeIdsList());
        }
    });
    private long index;

    private MetadataReply apply(MetadataCommand command) throws InvalidProtocolBufferException {
        LogEntryProto entry = LogEntryProto.newBuilder().setTerm(1).setIndex(index++)
                .setStateMachineLogEntry(StateMachineLogEntryProto.newBuilder()
                        .setLogData(ByteString.copyFrom(command.toByteArray()))).build();
        TransactionContext trx = TransactionContext.newBuilder().setStateMachine(machine).setLogEntry(entry).build();
        return MetadataReply.parseFrom(machine.applyTransaction(trx).join().getContent().toByteArray());
    }

    private static MetadataCommand begin(String topic, int partition, Integer... replicas) {
        return MetadataCommand.newBuilder().setBeginReassignment(reassignment(topic, partition, replicas)).build();
    }

    private static MetadataCommand complete(String topic, int partition, Integer... replicas) {
        return MetadataCommand.newBuilder().setCompleteReassignment(reassignment(topic, partition, replicas)).build();
    }

    private static PartitionReassignment reassignment(String topic, int partition, Integer... replicas) {
        return PartitionReassignment.newBuilder().setTopic(topic).setPartition(partition)
                .addAllReplicaNodeIds(List.of(replicas)).build();
    }

    private static String error(MetadataReply reply) {
        return reply.getError().getCode() + ": " + reply.getError().getMessage();
    }

    @BeforeEach
    void topicOnNodesOneAndTwo() throws InvalidProtocolBufferException {
        apply(MetadataCommand.newBuilder().setCreateTopic(TopicAssignment.newBuilder().setName("orders")
                .setReplicationFactor(2).addPartitions(PartitionAssignment.newBuilder().setPartition(0)
                        .addAllReplicaNodeIds(List.of(1, 2)))).build());
        changes.clear();
    }

    @Test
    void aReassignmentRecordsItsTargetThenMakesItTheReplicas() throws InvalidProtocolBufferException {
        assertEquals(MetadataReply.getDefaultInstance(), apply(begin("orders", 0, 2, 3)));
        assertEquals(List.of(1, 2), machine.topics().get(0).getPartitions(0).getReplicaNodeIdsList());
        assertEquals(List.of(2, 3), machine.topics().get(0).getPartitions(0).getTargetReplicaNodeIdsList());
        assertEquals(MetadataReply.getDefaultInstance(), apply(begin("orders", 0, 2, 3)), "the same target again");
        assertEquals(MetadataReply.getDefaultInstance(), apply(complete("orders", 0, 2, 3)));
        assertEquals(MetadataReply.getDefaultInstance(), apply(complete("orders", 0, 2, 3)), "completed again");
        assertEquals(List.of("orders-0 [1, 2][] -> [1, 2][2, 3]", "orders-0 [1, 2][2, 3] -> [2, 3][]"), changes,
                "repeated commands change nothing");
        assertEquals(PartitionAssignment.newBuilder().setPartition(0).addAllReplicaNodeIds(List.of(2, 3)).build(),
                machine.topics().get(0).getPartitions(0));
    }

    @Test
    void aMoveElsewhereWhileOneIsUnderWayAndACompleteWithoutABeginAreRefused() throws Exception {
        apply(begin("orders", 0, 2, 3));
        assertEquals("INVALID_REQUEST: a reassignment of orders-0 to [2, 3] is under way; finish it by asking for "
                + "[2, 3] again before moving the partition elsewhere", error(apply(begin("orders", 0, 3, 1))));
        assertEquals("INVALID_REQUEST: no reassignment of orders-0 to [3, 1] is under way (its replicas are [1, 2], "
                + "its target [2, 3])", error(apply(complete("orders", 0, 3, 1))));
        assertEquals(List.of("orders-0 [1, 2][] -> [1, 2][2, 3]"), changes);
    }

    @Test
    void anUnknownTopicOrPartitionIsNamed() throws InvalidProtocolBufferException {
        assertEquals(ErrorCode.UNKNOWN_TOPIC, apply(begin("invoices", 0, 1)).getError().getCode());
        assertEquals("UNKNOWN_PARTITION: topic 'orders' has partitions 0 to 0, not 4",
                error(apply(begin("orders", 4, 1))));
        assertEquals(List.of(), changes);
    }
}
