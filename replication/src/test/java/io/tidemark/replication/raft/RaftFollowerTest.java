package io.tidemark.replication.raft;

import org.apache.ratis.server.DivisionInfo;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

class RaftFollowerTest {
    /**
     * A replica Ratis has given no role yet: not the leader, and its role info fails as Ratis' does then (a
     * NullPointerException from RoleInfo.buildRoleInfoProto).
     */
    private static DivisionInfo starting() {
        return (DivisionInfo) Proxy.newProxyInstance(DivisionInfo.class.getClassLoader(),
                new Class<?>[] {DivisionInfo.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "isLeader" -> false;
                    case "getRoleInfoProto", "getFollowerMatchIndices" -> throw new NullPointerException(
                            "RoleInfo.buildRoleInfoProto: no role yet");
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    @Test
    void aReplicaThatDoesNotLeadSeesNoFollowersWithoutAskingForItsRoleInfo() {
        assertEquals(Optional.empty(), RaftFollower.seenBy(starting()));
    }
}
