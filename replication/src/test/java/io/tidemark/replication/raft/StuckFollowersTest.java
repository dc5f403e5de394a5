package io.tidemark.replication.raft;

import io.tidemark.replication.raft.StuckFollowers.Follower;
import io.tidemark.replication.raft.StuckFollowers.LeaderLog;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class StuckFollowersTest {
    private static final long STUCK_MS = 15_000;
    private static final long ANSWERED_MS_MAX = 3_000;
    private static final String G = "group-1";
    /** The leader of term 3 holds indices 0 to 13, as in the CI run of 9b34327. */
    private static final LeaderLog LOG = new LeaderLog(G, 3, 0, 13);

    private final StuckFollowers followers = new StuckFollowers(STUCK_MS, ANSWERED_MS_MAX);

    private List<Follower> observe(LeaderLog log, long nowMs, Follower... seen) {
        return followers.observe(List.of(log), List.of(seen), nowMs);
    }

    @Test
    void aFollowerThatAnswersAndStaysAtOneMatchIndexIsStuckAfterTheBound() {
        Follower n1 = new Follower(G, 1, 1, 200);
        Follower n3 = new Follower(G, 3, 13, 200);
        assertEquals(List.of(), observe(LOG, 0, n1, n3));
        assertEquals(List.of(), observe(LOG, STUCK_MS - 1, n1, n3));
        assertEquals(List.of(n1), observe(LOG, STUCK_MS, n1, n3), "node 3 holds all: it is not behind");
    }

    @Test
    void aMatchIndexThatMovesStartsTheWaitAgain() {
        assertEquals(List.of(), observe(LOG, 0, new Follower(G, 1, 1, 200)));
        assertEquals(List.of(), observe(LOG, 10_000, new Follower(G, 1, 2, 200)));
        assertEquals(List.of(), observe(LOG, 10_000 + STUCK_MS - 1, new Follower(G, 1, 2, 200)));
        assertEquals(1, observe(LOG, 10_000 + STUCK_MS, new Follower(G, 1, 2, 200)).size());
    }

    @Test
    void aFollowerThatDoesNotAnswerIsForAnElectionNotAStepDown() {
        assertEquals(List.of(), observe(LOG, 0, new Follower(G, 1, 1, ANSWERED_MS_MAX + 1)));
        assertEquals(List.of(), observe(LOG, STUCK_MS, new Follower(G, 1, 1, 9_000)));
        assertEquals(List.of(), observe(LOG, STUCK_MS + 1, new Follower(G, 1, 1, 200)),
                "answering again starts the wait");
    }

    @Test
    void aFollowerLackingEntriesBelowTheLeadersLogStartIsInstallingASnapshot() {
        LeaderLog purged = new LeaderLog(G, 3, 500, 900);
        assertEquals(List.of(), observe(purged, 0, new Follower(G, 1, 98, 200)));
        assertEquals(List.of(), observe(purged, STUCK_MS * 10, new Follower(G, 1, 98, 200)));
        assertEquals(List.of(), observe(purged, STUCK_MS * 10 + 1, new Follower(G, 1, 499, 200)));
        assertEquals(1, observe(purged, STUCK_MS * 11 + 1, new Follower(G, 1, 499, 200)).size(),
                "index 500, the one after its match, is in the leader's log");
    }

    @Test
    void aNewTermOrAGroupNoLongerLedStartsTheWaitAgain() {
        Follower n1 = new Follower(G, 1, 1, 200);
        assertEquals(List.of(), observe(LOG, 0, n1));
        assertEquals(List.of(), observe(new LeaderLog(G, 4, 0, 13), STUCK_MS, n1));
        assertEquals(List.of(), followers.observe(List.of(), List.of(), STUCK_MS * 2));
        assertEquals(List.of(), observe(LOG, STUCK_MS * 2 + 1, n1));
        assertEquals(List.of(n1), observe(LOG, STUCK_MS * 3 + 1, n1));
        followers.forget(G);
        assertEquals(List.of(), observe(LOG, STUCK_MS * 3 + 2, n1), "the leader stepped down: its view is gone");
    }
}
