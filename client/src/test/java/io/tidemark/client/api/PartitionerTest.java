package io.tidemark.client.api;

import com.google.common.hash.Hashing;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PartitionerTest {
    private static byte[] key(int i) {
        return ("key-" + i).getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aKeyAlwaysMapsToTheNonNegativeMurmur3HashModuloThePartitionCount() {
        Partitioner partitioner = new Partitioner(new Random(1));
        for (int i = 0; i < 200; i++) {
            int hash = Hashing.murmur3_32_fixed().hashBytes(key(i)).asInt();
            int expected = (hash & 0x7fffffff) % 12;
            assertEquals(expected, partitioner.partition("t", key(i), 12));
            assertEquals(expected, partitioner.partition("other", key(i), 12));
        }
        // a known value: "key-0" hashes the same on every JVM and every run
        assertEquals((Hashing.murmur3_32_fixed().hashBytes(key(0)).asInt() & 0x7fffffff) % 7,
                Partitioner.keyPartition(key(0), 7));
    }

    @Test
    void keysSpreadOverThePartitions() {
        int[] counts = new int[8];
        for (int i = 0; i < 8_000; i++) {
            counts[Partitioner.keyPartition(key(i), 8)]++;
        }
        for (int p = 0; p < 8; p++) {
            assertTrue(counts[p] > 850 && counts[p] < 1_150, "partition " + p + " got " + counts[p] + " of 8000");
        }
    }

    @Test
    void keylessRecordsStickToOnePartitionUntilABatchOfItIsSent() {
        Partitioner partitioner = new Partitioner(new Random(42));
        int sticky = partitioner.partition("t", null, 4);
        for (int i = 0; i < 10; i++) {
            assertEquals(sticky, partitioner.partition("t", null, 4));
        }
        partitioner.batchSent("t", (sticky + 1) % 4, 4);
        assertEquals(sticky, partitioner.partition("t", null, 4), "a batch of another partition moves nothing");

        partitioner.batchSent("t", sticky, 4);
        int next = partitioner.partition("t", null, 4);
        assertNotEquals(sticky, next);
        assertTrue(next >= 0 && next < 4);
    }

    @Test
    void aSinglePartitionTopicAlwaysGetsPartitionZero() {
        Partitioner partitioner = new Partitioner(new Random(3));
        assertEquals(0, partitioner.partition("t", null, 1));
        partitioner.batchSent("t", 0, 1);
        assertEquals(0, partitioner.partition("t", null, 1));
        assertEquals(0, partitioner.partition("t", key(9), 1));
    }
}
