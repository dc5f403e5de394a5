package io.tidemark.replication.cluster;

import io.tidemark.replication.raft.RaftGroups;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.function.BooleanSupplier;

/**
 * Whether a started broker's replica of the metadata group has caught up with the cluster's, so that the broker may
 * answer clients ({@code CaughtUpGate}): it has heard from a leader (or leads, ready), its commit index reaches the
 * last entry its log held when it started, and it applied every committed entry. Once true, it stays true.
 *
 * <p>Why: without commit-index entries in the Raft log ({@code RaftSettings}), a restarted replica's commit index is
 * its snapshot's until a leader speaks, so what it replays by itself may lack the latest topics, and a client that
 * asked it took the missing topic for UNKNOWN_TOPIC (TransactionChaosIT: a transactional producer's coordinator
 * lookup, eight times in one run, once the broker started serving faster). Kafka's brokers likewise serve only once
 * they caught up with the metadata log. A broker whose metadata group has no quorum (most of the others down) answers
 * NOT_AVAILABLE until it has one again.
 */
final class MetadataCaughtUp implements BooleanSupplier {
    private static final Logger LOG = LoggerFactory.getLogger(MetadataCaughtUp.class);
    private static final long POLL_MS = 10;

    private final RaftServer.Division metadata;
    private final long startedWith;
    private volatile boolean caughtUp;

    private MetadataCaughtUp(RaftServer.Division metadata, long startedWith) {
        this.metadata = metadata;
        this.startedWith = startedWith;
    }

    /** For {@code server}'s metadata replica, which has started: its log's last entry now is the one to reach. */
    static MetadataCaughtUp of(RaftServer server) throws IOException {
        RaftServer.Division metadata = server.getDivision(RaftGroups.METADATA);
        TermIndex last = metadata.getRaftLog().getLastEntryTermIndex();
        return new MetadataCaughtUp(metadata, last == null ? -1 : last.getIndex());
    }

    /**
     * Waits up to about {@code maxWaitMs}, polling every {@value #POLL_MS} ms, for the replica to catch up: a broker
     * of a cluster whose metadata group has a quorum then serves from its first answer on (a single broker elects
     * itself in a few hundred ms, a restarted one hears its leader within a heartbeat).
     *
     * @return whether it caught up
     */
    boolean await(long maxWaitMs) throws InterruptedException {
        for (long waited = 0; !getAsBoolean() && waited < maxWaitMs; waited += POLL_MS) {
            Thread.sleep(POLL_MS);
        }
        return getAsBoolean();
    }

    @Override
    public boolean getAsBoolean() {
        if (caughtUp) {
            return true;
        }
        DivisionInfo info = metadata.getInfo();
        boolean heard = info.isLeader() ? info.isLeaderReady() : info.getLeaderId() != null;
        long applied = info.getLastAppliedIndex();
        long committed = metadata.getRaftLog().getLastCommittedIndex();
        if (caughtUp(heard, applied, committed, startedWith)) {
            caughtUp = true;
            LOG.info("The metadata replica caught up (applied {}, its log held {} at the start): serving clients",
                    applied, startedWith);
        }
        return caughtUp;
    }

    /**
     * @param heard       whether the replica heard from its leader, or leads and is ready
     * @param applied     the replica's last applied index
     * @param committed   its commit index
     * @param startedWith the last index its log held when it started; -1 for none
     */
    static boolean caughtUp(boolean heard, long applied, long committed, long startedWith) {
        return heard && committed >= startedWith && applied >= committed;
    }
}
