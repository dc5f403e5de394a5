package io.tidemark.replication.statemachine;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MetadataCommand;
import io.tidemark.proto.v1.PartitionAssignment;
import io.tidemark.proto.v1.PartitionReassignment;
import io.tidemark.proto.v1.TopicAssignment;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class MetadataCommandCheckTest {
    private static final Set<Integer> BROKERS = Set.of(1, 2, 3);

    private static TopicAssignment.Builder topic() {
        return TopicAssignment.newBuilder().setName("orders").setReplicationFactor(2)
                .addPartitions(PartitionAssignment.newBuilder().setPartition(0).addAllReplicaNodeIds(List.of(1, 2)))
                .addPartitions(PartitionAssignment.newBuilder().setPartition(1).addAllReplicaNodeIds(List.of(2, 3)));
    }

    private static ByteString create(TopicAssignment.Builder topic) {
        return ByteString.copyFrom(MetadataCommand.newBuilder().setCreateTopic(topic).build().toByteArray());
    }

    private static ByteString reassign(PartitionReassignment.Builder reassignment) {
        return ByteString.copyFrom(MetadataCommand.newBuilder().setBeginReassignment(reassignment).build()
                .toByteArray());
    }

    @Test
    void theCommandsBrokersSendPass() {
        assertEquals("orders", MetadataCommandCheck.check(create(topic()), BROKERS).getCreateTopic().getName());
        MetadataCommandCheck.check(reassign(PartitionReassignment.newBuilder().setTopic("__group_offsets")
                .setPartition(0).addAllReplicaNodeIds(List.of(3, 1))), BROKERS);
    }

    @Test
    void aCommandApplyCouldNotTakeIsRefusedNamingWhatIsWrong() {
        Map<ByteString, String> refused = new LinkedHashMap<>();
        refused.put(ByteString.copyFrom(new byte[] {(byte) 0xff, 1}), "a request that is not a MetadataCommand");
        refused.put(ByteString.EMPTY, "a MetadataCommand without a command");
        refused.put(create(topic().setName("no/slash")), "topic name 'no/slash'");
        refused.put(create(topic().clearPartitions()), "topic 'orders' with 0 partitions");
        refused.put(create(topic().setPartitions(1, topic().getPartitions(1).toBuilder().setPartition(5))),
                "partition 5 of 'orders' in place 1");
        refused.put(create(topic().setPartitions(0, topic().getPartitions(0).toBuilder().addReplicaNodeIds(9))),
                "replicas [1, 2, 9] for orders-0");
        refused.put(create(topic().setPartitions(0, topic().getPartitions(0).toBuilder().addReplicaNodeIds(1))),
                "replicas [1, 2, 1] for orders-0");
        refused.put(create(topic().setTopicId(com.google.protobuf.ByteString.copyFrom(new byte[5]))),
                "a topic id of 5 bytes for 'orders'");
        refused.put(reassign(PartitionReassignment.newBuilder().setTopic("orders").setPartition(-1)
                .addReplicaNodeIds(1)), "a reassignment of partition -1");
        for (Map.Entry<ByteString, String> request : refused.entrySet()) {
            TidemarkException e = assertThrows(TidemarkException.class,
                    () -> MetadataCommandCheck.check(request.getKey(), BROKERS), request.getValue());
            assertEquals(ErrorCode.INVALID_REQUEST, e.code());
            assertEquals(true, e.getMessage().startsWith("the metadata group refuses " + request.getValue()),
                    e.getMessage());
        }
    }
}
