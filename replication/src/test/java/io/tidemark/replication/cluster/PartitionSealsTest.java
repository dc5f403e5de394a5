package io.tidemark.replication.cluster;

import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.GroupPartition;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

class PartitionSealsTest {
    private static final long BASE_MS = 1_700_000_000_000L;
    private static final GroupPartition P0 = partition(0);
    private static final GroupPartition P1 = partition(1);

    private final PartitionSeals seals = new PartitionSeals();

    private static GroupPartition partition(int partition) {
        return GroupPartition.newBuilder().setTopic("t").setTopicId(TopicIds.toBytes(new UUID(1, 2)))
                .setPartition(partition).build();
    }

    @Test
    void aPartitionSealedForLongerThanTheBoundIsOverdueFromWhenItWasFirstSeenSealed() {
        assertEquals(List.of(), seals.overdue(List.of(P0), BASE_MS));
        assertEquals(List.of(), seals.overdue(List.of(P0, P1), BASE_MS + 5_000));
        assertEquals(List.of(), seals.overdue(List.of(P0, P1), BASE_MS + PartitionSeals.MAX_SEALED_MS),
                "not beyond the bound yet");
        assertEquals(List.of(P0), seals.overdue(List.of(P0, P1), BASE_MS + PartitionSeals.MAX_SEALED_MS + 1));
        assertEquals(List.of(P0, P1), seals.overdue(List.of(P0, P1), BASE_MS + PartitionSeals.MAX_SEALED_MS + 5_001));
    }

    /** A partition no longer sealed (unsealed, released, moved) is forgotten: sealed again, its time starts over. */
    @Test
    void aPartitionSealedAgainStartsOver() {
        seals.overdue(List.of(P0), BASE_MS);
        seals.overdue(List.of(), BASE_MS + 1_000);
        long sealedAgainMs = BASE_MS + PartitionSeals.MAX_SEALED_MS;
        assertEquals(List.of(), seals.overdue(List.of(P0), sealedAgainMs));
        assertEquals(List.of(), seals.overdue(List.of(P0), sealedAgainMs + PartitionSeals.MAX_SEALED_MS));
        assertEquals(List.of(P0), seals.overdue(List.of(P0), sealedAgainMs + PartitionSeals.MAX_SEALED_MS + 1));
    }
}
