package io.tidemark.proto.record;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class OriginPartitionTest {
    @Test
    void clusterNamesAreOneTo64AsciiLettersDigitsDotsUnderscoresAndDashes() {
        assertEquals(List.of(true, true, true), List.of("A", "dc-1.eu_West9", "x".repeat(64)).stream()
                .map(OriginPartition::isClusterName).toList());
        assertEquals(List.of(false, false, false, false, false, false), Arrays.asList(null, "", "x".repeat(65), "a,b",
                "a b", "é").stream().map(OriginPartition::isClusterName).toList());
        assertEquals("cluster name 'a,b' is not allowed: use 1 to 64 characters from a-z A-Z 0-9 . _ -",
                assertThrows(IllegalArgumentException.class, () -> new OriginPartition("a,b", "t", new UUID(0, 1), 0))
                        .getMessage());
    }

    @Test
    void twoIncarnationsOfATopicAreTwoOriginsNamedWithTheirIds() {
        OriginPartition old = new OriginPartition("A", "orders", new UUID(1, 1), 0);
        OriginPartition recreated = new OriginPartition("A", "orders", new UUID(1, 2), 0);
        assertNotEquals(old, recreated);
        assertEquals("A:orders-0 (topic id 00000000-0000-0001-0000-000000000002)", recreated.toString());
        assertEquals("topicId", assertThrows(NullPointerException.class, () -> new OriginPartition("A", "orders",
                null, 0)).getMessage());
    }
}
