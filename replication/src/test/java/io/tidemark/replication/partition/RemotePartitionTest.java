package io.tidemark.replication.partition;

import io.tidemark.core.partition.PartitionLeader;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.replication.cluster.ClusterMembers;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

class RemotePartitionTest {
    private static final ClusterMembers MEMBERS = ClusterMembers.parse(
            "1=127.0.0.1:9400:9500,2=127.0.0.1:9410:9510,3=127.0.0.1:9420:9520,4=127.0.0.1:9430:9530");
    private static final UUID GROUP = new UUID(9, 1);

    @Test
    void reportsTheLeaderTheReplicasToldAndNoLeaderWhenNoneDid() {
        AtomicReference<PartitionLeader> leader = new AtomicReference<>(new PartitionLeader(3, 8));
        RemotePartition partition = new RemotePartition(new TopicPartition("t", 0), MEMBERS, List.of(2, 3, 4),
                GROUP, group -> group.equals(GROUP) ? leader.get() : PartitionLeader.NONE);

        assertEquals(new PartitionLeader(3, 8), partition.status().leader(), "not the preferred replica 2");
        assertEquals(List.of(2, 3, 4), partition.status().replicaNodeIds());
        assertEquals(GROUP.toString(), partition.status().groupId());
        TidemarkException redirect = assertThrows(TidemarkException.class, () -> partition.read(0, 100));
        assertEquals(ErrorCode.NOT_LEADER, redirect.code());
        assertEquals(3, redirect.leaderNodeId());
        assertEquals(8, redirect.leaderEpoch());
        assertEquals("127.0.0.1:9420", redirect.leaderAddress());

        leader.set(PartitionLeader.NONE);
        assertEquals(TidemarkException.NO_LEADER, partition.status().leaderNodeId());
        CompletionException append = assertThrows(CompletionException.class,
                () -> partition.append(ByteBuffer.allocate(0)).join());
        TidemarkException noLeader = assertInstanceOf(TidemarkException.class, append.getCause());
        assertEquals(TidemarkException.NO_LEADER, noLeader.leaderNodeId());
        assertEquals("", noLeader.leaderAddress());
    }
}
