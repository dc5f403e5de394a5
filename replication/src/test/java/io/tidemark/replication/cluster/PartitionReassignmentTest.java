package io.tidemark.replication.cluster;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The replica lists a reassignment takes, and the errors for those it does not. */
class PartitionReassignmentTest {
    private static final List<Integer> NODES = List.of(1, 2, 3);

    private static TidemarkException refused(List<Integer> replicas) {
        return assertThrows(TidemarkException.class, () -> PartitionReassignment.checkReplicaList(replicas, NODES));
    }

    @Test
    void anyOrderOfOneToAllBrokersIsAllowed() {
        PartitionReassignment.checkReplicaList(List.of(2), NODES);
        PartitionReassignment.checkReplicaList(List.of(3, 1), NODES);
        PartitionReassignment.checkReplicaList(List.of(3, 1, 2), NODES);
    }

    @Test
    void anEmptyListOrOneLongerThanTheClusterNamesWhatIsAllowed() {
        TidemarkException empty = refused(List.of());
        assertEquals(ErrorCode.INVALID_REPLICATION_FACTOR, empty.code());
        assertEquals("a partition needs 1 to 3 replicas on this cluster of 3 brokers [1, 2, 3], not 0",
                empty.getMessage());
        TidemarkException tooMany = refused(List.of(1, 2, 3, 4));
        assertEquals(ErrorCode.INVALID_REPLICATION_FACTOR, tooMany.code());
        assertEquals("a partition needs 1 to 3 replicas on this cluster of 3 brokers [1, 2, 3], not 4 [1, 2, 3, 4]",
                tooMany.getMessage());
    }

    @Test
    void anUnknownNodeOrOneListedTwiceIsNamed() {
        TidemarkException unknown = refused(List.of(1, 7));
        assertEquals(ErrorCode.INVALID_REQUEST, unknown.code());
        assertEquals("node 7 in replicas [1, 7] is not a broker of this cluster; its brokers are [1, 2, 3]",
                unknown.getMessage());
        TidemarkException twice = refused(List.of(2, 1, 2));
        assertEquals(ErrorCode.INVALID_REQUEST, twice.code());
        assertEquals("node 2 is listed twice in replicas [2, 1, 2]; a broker holds at most one replica of a "
                + "partition", twice.getMessage());
    }
}
