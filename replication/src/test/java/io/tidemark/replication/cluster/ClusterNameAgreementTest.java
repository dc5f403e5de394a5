package io.tidemark.replication.cluster;

import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ClusterNameAgreementTest {
    /** The warning about node 3, whose name is described as {@code theirs}, this broker's as {@code ours}. */
    private static Optional<String> warning(String theirs, String ours) {
        return Optional.of("node 3 has " + theirs + " and this broker has " + ours + ": every broker of a cluster "
                + "needs the same cluster.name (clients and mirrors are told the name of the broker they ask)");
    }

    @Test
    void aDifferentNameIsReportedWhenItShowsAndWhenItChangesNotAtEveryProbe() {
        ClusterNameAgreement agreement = new ClusterNameAgreement("dc-a");
        assertEquals(Optional.empty(), agreement.answered(2, "dc-a"));
        assertEquals(warning("no cluster.name", "cluster.name 'dc-a'"), agreement.answered(3, ""));
        assertEquals(Optional.empty(), agreement.answered(3, ""), "reported already");
        assertEquals(warning("cluster.name 'dc-b'", "cluster.name 'dc-a'"), agreement.answered(3, "dc-b"),
                "its name changed");
        assertEquals(Optional.empty(), agreement.answered(3, "dc-b"));
        assertEquals(Optional.empty(), agreement.answered(3, "dc-a"), "it agrees now");
        assertEquals(warning("cluster.name 'dc-b'", "cluster.name 'dc-a'"), agreement.answered(3, "dc-b"),
                "and differs again");
    }

    @Test
    void withoutANameEveryNamedMemberDiffers() {
        ClusterNameAgreement agreement = new ClusterNameAgreement("");
        assertEquals(Optional.empty(), agreement.answered(2, ""));
        assertEquals(warning("cluster.name 'dc-a'", "no cluster.name"), agreement.answered(3, "dc-a"));
    }
}
