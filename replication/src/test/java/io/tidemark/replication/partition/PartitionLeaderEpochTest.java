package io.tidemark.replication.partition;

import io.tidemark.core.ManualClock;
import io.tidemark.core.partition.PartitionLeader;
import io.tidemark.core.partition.TopicPartition;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.server.RaftServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A partition's leader epoch is its group's Raft term in which the leader leads: what the metadata and a NOT_LEADER
 * carry, and what the client compares. A leader that steps down (as StuckFollowerWatch has it do, a transfer naming no
 * one) and is elected again leads in a later epoch.
 */
class PartitionLeaderEpochTest {
    private static final TopicPartition PARTITION = new TopicPartition("t", 0);
    private static final UUID TOPIC_ID = new UUID(3, 4);

    @TempDir
    Path dir;
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    @Test
    void theEpochIsTheGroupsTermAndAStepDownAndElectionLeadInALaterOne() throws Exception {
        try (OneReplicaGroup group = OneReplicaGroup.start(dir, clock)) {
            ReplicatedPartition partition = group.add(PARTITION, TOPIC_ID, Map.of());
            RaftServer.Division division = partition.group().division();
            PartitionLeader first = partition.status().leader();
            assertEquals(new PartitionLeader(1, division.getInfo().getCurrentTerm()), first);
            assertTrue(first.epoch() >= 1, "the term of an election: " + first);

            RaftServer server = division.getRaftServer();
            RaftClientReply stepDown = server.transferLeadershipAsync(new TransferLeadershipRequest(
                    ClientId.randomId(), server.getId(), division.getMemberId().getGroupId(), 1, null, 10_000))
                    .get();
            assertTrue(stepDown.isSuccess(), "stepped down: " + stepDown);
            await().atMost(Duration.ofSeconds(30)).until(() -> partition.status().leader().nodeId() == 1
                    && partition.status().leader().epoch() > first.epoch());
        }
    }
}
