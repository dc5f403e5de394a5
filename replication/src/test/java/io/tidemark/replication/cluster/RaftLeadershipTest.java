package io.tidemark.replication.cluster;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.replication.raft.RaftPeerIds;
import org.apache.ratis.client.api.AdminApi;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.protocol.exceptions.TransferLeadershipException;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The transfer's attempts, against a scripted Ratis admin API: Ratis throws a refused transfer, and answers others. */
class RaftLeadershipTest {
    /** Answers each transfer with the next scripted outcome: a reply, or an exception to throw. */
    private static final class ScriptedAdmin implements AdminApi {
        private final Deque<Object> outcomes = new ArrayDeque<>();
        private final List<String> asked = new ArrayList<>();

        ScriptedAdmin then(Object outcome) {
            outcomes.add(outcome);
            return this;
        }

        @Override
        public RaftClientReply setConfiguration(SetConfigurationRequest.Arguments arguments) {
            throw new UnsupportedOperationException("not scripted");
        }

        @Override
        public RaftClientReply transferLeadership(RaftPeerId newLeader, RaftPeerId leader, long timeoutMs)
                throws IOException {
            asked.add(newLeader + " within " + timeoutMs + " ms");
            Object outcome = outcomes.removeFirst();
            if (outcome instanceof IOException e) {
                throw e;
            }
            return (RaftClientReply) outcome;
        }
    }

    private static RaftClientReply reply(boolean success) {
        RaftClientReply.Builder reply = RaftClientReply.newBuilder().setClientId(ClientId.randomId())
                .setServerId(RaftPeerIds.of(1)).setGroupId(RaftGroupId.randomId()).setCallId(1);
        return success ? reply.setSuccess().build()
                : reply.setException(new TransferLeadershipException("timed out")).build();
    }

    private static TransferLeadershipException differentLeader() {
        return new TransferLeadershipException("n2@group: Failed to transfer leadership to n3 (the current leader is "
                + "n1): DIFFERENT_LEADER");
    }

    @Test
    void aTransferRatisThrowsOutIsTriedAgain() throws IOException {
        ScriptedAdmin admin = new ScriptedAdmin().then(differentLeader()).then(reply(true));
        RaftLeadership.transfer(admin, 3, 9_000, "group g");
        assertEquals(List.of("n3 within 3000 ms", "n3 within 3000 ms"), admin.asked, "each attempt gets its share");
    }

    @Test
    void aFailedReplyIsTriedAgainToo() throws IOException {
        ScriptedAdmin admin = new ScriptedAdmin().then(reply(false)).then(differentLeader()).then(reply(true));
        RaftLeadership.transfer(admin, 3, 9_000, "group g");
        assertEquals(3, admin.asked.size());
    }

    @Test
    void theLastAttemptsFailureIsTheAnswer() {
        ScriptedAdmin thrown = new ScriptedAdmin().then(reply(false)).then(differentLeader()).then(differentLeader());
        IOException last = assertThrows(IOException.class, () -> RaftLeadership.transfer(thrown, 3, 9_000, "g"));
        assertEquals(differentLeader().getMessage(), last.getMessage());

        ScriptedAdmin answered = new ScriptedAdmin().then(differentLeader()).then(differentLeader())
                .then(reply(false));
        TidemarkException refused = assertThrows(TidemarkException.class,
                () -> RaftLeadership.transfer(answered, 3, 9_000, "group g"));
        assertEquals(ErrorCode.NOT_AVAILABLE, refused.code());
        assertEquals("leadership of group g did not move to node 3: org.apache.ratis.protocol.exceptions."
                + "TransferLeadershipException: timed out", refused.getMessage());
        assertEquals(3, answered.asked.size());
    }
}
