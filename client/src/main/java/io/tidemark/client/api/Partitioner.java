package io.tidemark.client.api;

import com.google.common.hash.HashFunction;
import com.google.common.hash.Hashing;

import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Chooses the partition of a record that names none. A record with a key goes to the murmur3 hash of the key,
 * made non-negative, modulo the partition count, so a key always lands in the same partition while the count
 * stays the same. Records without a key stick to one partition per topic, which moves to another partition each
 * time a batch of it is sent: keyless records then fill batches instead of trickling into many small ones, and
 * still spread over the partitions over time.
 *
 * <p>Thread-safe: sticky choices live in a concurrent map; the random source is used under its own lock.
 */
final class Partitioner {
    private static final HashFunction HASH = Hashing.murmur3_32_fixed();

    private final Random random;
    private final ConcurrentHashMap<String, Integer> sticky = new ConcurrentHashMap<>();

    /** @param random picks sticky partitions; tests pass a seeded one */
    Partitioner(Random random) {
        this.random = random;
    }

    /** The partition of {@code key} among {@code partitionCount}: murmur3, non-negative, modulo the count. */
    static int keyPartition(byte[] key, int partitionCount) {
        return (HASH.hashBytes(key).asInt() & 0x7fffffff) % partitionCount;
    }

    /** The partition for a record of {@code topic} with {@code key} (null for none). */
    int partition(String topic, byte[] key, int partitionCount) {
        if (key != null) {
            return keyPartition(key, partitionCount);
        }
        return sticky.compute(topic, (t, current) -> current != null && current < partitionCount ? current
                : randomPartition(partitionCount, -1));
    }

    /** Moves the topic's sticky partition elsewhere when a batch of it was just sent. */
    void batchSent(String topic, int partition, int partitionCount) {
        sticky.computeIfPresent(topic, (t, current) -> current != partition ? current
                : randomPartition(partitionCount, partition));
    }

    private int randomPartition(int partitionCount, int avoid) {
        if (partitionCount == 1) {
            return 0;
        }
        synchronized (random) {
            if (avoid < 0 || avoid >= partitionCount) {
                return random.nextInt(partitionCount);
            }
            int next = random.nextInt(partitionCount - 1);
            return next >= avoid ? next + 1 : next;
        }
    }
}
