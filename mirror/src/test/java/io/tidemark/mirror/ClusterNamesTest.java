package io.tidemark.mirror;

import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class ClusterNamesTest {
    private static final String SOURCE = "10.0.0.1:9400";
    private static final String TARGET = "10.0.1.1:9400";

    private static MirrorConfig config(String sourceName, Optional<String> targetName) {
        return MirrorConfig.of(SOURCE, sourceName, TARGET, targetName, ".*", ".*", "");
    }

    private static String refusal(Runnable check) {
        return assertThrows(IllegalArgumentException.class, check::run).getMessage();
    }

    @Test
    void theTargetsOwnNameIsTakenWhenNoneIsGivenAndMustBeTheOneGiven() {
        assertEquals(new ClusterNames("A", "B"), ClusterNames.resolve(config("A", Optional.empty()),
                Optional.of("B")));
        assertEquals(new ClusterNames("A", "B"), ClusterNames.resolve(config("A", Optional.of("B")),
                Optional.of("B")));
        assertEquals("the target cluster 10.0.1.1:9400 is named 'C' (its cluster.name), not 'B' as --target-name "
                + "says: check --target, or leave --target-name out to take the target's own name",
                refusal(() -> ClusterNames.resolve(config("A", Optional.of("B")), Optional.of("C"))));
    }

    @Test
    void aTargetWithoutANameNeedsOneGiven() {
        assertEquals(new ClusterNames("A", "B"), ClusterNames.resolve(config("A", Optional.of("B")),
                Optional.empty()));
        assertEquals("the target cluster 10.0.1.1:9400 has no name: set cluster.name in its brokers' config, or give "
                + "--target-name", refusal(() -> ClusterNames.resolve(config("A", Optional.empty()),
                Optional.empty())));
    }

    @Test
    void theSourceAndTargetNeverShareAName() {
        assertEquals("the source and target names are both 'tidemark'; a mirror copies between two clusters with "
                + "different names", refusal(() -> ClusterNames.resolve(config("tidemark", Optional.empty()),
                Optional.of("tidemark"))));
    }

    @Test
    void theSourceMustHaveTheNameGivenWhenItHasOne() {
        ClusterNames names = new ClusterNames("A", "B");
        names.checkSource(SOURCE, Optional.of("A"));
        names.checkSource(SOURCE, Optional.empty());
        assertEquals("the source cluster 10.0.0.1:9400 is named 'C' (its cluster.name), not 'A' as --source-name "
                + "says: check --source and --source-name", refusal(() -> names.checkSource(SOURCE,
                Optional.of("C"))));
    }
}
