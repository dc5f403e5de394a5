package io.tidemark.replication.cluster;

import org.apache.ratis.protocol.RaftPeer;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ClusterMembersTest {
    private final ClusterMembers members = ClusterMembers.parse(
            "1=127.0.0.1:9400:9500,2=127.0.0.1:9410:9510,3=127.0.0.1:9420:9520");

    private static List<String> described(List<RaftPeer> peers) {
        return peers.stream().map(p -> p.getId() + "@" + p.getAddress() + " priority " + p.getPriority()).toList();
    }

    @Test
    void peersAllHaveTheSamePriority() {
        assertEquals(List.of("n2@127.0.0.1:9510 priority 0", "n3@127.0.0.1:9520 priority 0",
                "n1@127.0.0.1:9500 priority 0"), described(members.peers(List.of(2, 3, 1))));
    }

    @Test
    void aNewGroupsPreferredReplicaOutranksTheOthers() {
        assertEquals(List.of("n2@127.0.0.1:9510 priority 1", "n3@127.0.0.1:9520 priority 0",
                "n1@127.0.0.1:9500 priority 0"), described(members.peersPreferringFirst(List.of(2, 3, 1))));
    }
}
