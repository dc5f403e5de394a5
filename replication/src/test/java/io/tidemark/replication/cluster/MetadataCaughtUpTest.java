package io.tidemark.replication.cluster;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MetadataCaughtUpTest {
    @Test
    void aReplicaThatHeardNoLeaderHasNotCaughtUpWhateverItApplied() {
        assertFalse(MetadataCaughtUp.caughtUp(false, 40, 40, 40));
    }

    @Test
    void aRestartedReplicaWhoseCommitIndexIsStillItsSnapshotsHasNotCaughtUp() {
        assertFalse(MetadataCaughtUp.caughtUp(true, 12, 12, 40), "committed 12 of the 40 entries its log held");
    }

    @Test
    void aReplicaStillApplyingHasNotCaughtUp() {
        assertFalse(MetadataCaughtUp.caughtUp(true, 39, 41, 40));
    }

    @Test
    void aReplicaThatHeardItsLeaderAndAppliedEveryCommittedEntryHasCaughtUp() {
        assertTrue(MetadataCaughtUp.caughtUp(true, 41, 41, 40));
        assertTrue(MetadataCaughtUp.caughtUp(true, 0, 0, -1), "a new cluster's first leader");
    }
}
