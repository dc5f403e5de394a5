package io.tidemark.client.api;

import io.tidemark.proto.record.RecordBatchFormat;

import java.security.SecureRandom;
import java.util.HashMap;
import java.util.Map;

/**
 * The producer id, epoch and per-partition sequence numbers that let the broker drop a batch it already stored.
 *
 * <p>When idempotence is on, the producer id is a random non-negative long from {@link SecureRandom}, picked
 * once per producer, with epoch 0. The cluster does not hand out producer ids yet; two producers picking the same
 * id is negligible at 2^63. Every partition has a next-sequence counter, starting at 0. A batch
 * {@link #take takes} its base sequence when its bytes are built, on its first send, and the counter moves past
 * its records; a retry resends the same bytes, so a broker that stored the batch but whose reply was lost (or
 * that lost leadership after storing it) recognises the retry as a duplicate and answers with the offsets it
 * already gave. When the broker refuses a batch outright, nothing of it was stored, so the partition's counter is
 * {@link #rewind rewound} to the batch's base sequence and the next batch continues where the broker's sequence
 * is; that is sound only while no batch sent after it took a sequence, and the sender renews the id instead when
 * one did (several batches of a partition in flight, {@link Sender}). A batch that failed without an answer
 * {@link #renew renews} the producer id.
 *
 * <p>Sequences wrap from {@link Integer#MAX_VALUE} to 0, as Kafka's do.
 *
 * <p>When idempotence is off, batches carry {@link RecordBatchFormat#NO_PRODUCER_ID},
 * {@link RecordBatchFormat#NO_PRODUCER_EPOCH} and {@link RecordBatchFormat#NO_SEQUENCE}.
 *
 * <p>A transactional producer's id and epoch come from the transaction coordinator ({@link #assign}) and cannot be
 * renewed: the coordinator knows the transaction by them. Where an idempotent producer renews its id, a transactional
 * one marks its sequences broken instead ({@link #broken}): its transaction can only abort, and the producer then
 * asks the coordinator for a new epoch, which starts every partition's sequences at 0 again.
 *
 * <p>Thread-safe: the sender thread builds batches while the application's thread may assign a new epoch (when no
 * batch is pending).
 */
final class ProducerSequences {
    private final SecureRandom random;
    private final boolean transactional;
    private final Map<TopicPartition, Integer> next = new HashMap<>();
    private short epoch;
    private long producerId;
    private volatile boolean broken;

    private ProducerSequences(SecureRandom random, long producerId, short epoch, boolean transactional) {
        this.random = random;
        this.producerId = producerId;
        this.epoch = epoch;
        this.transactional = transactional;
    }

    /** A fresh random producer id with epoch 0 when {@code idempotence}, else the non-idempotent identity. */
    static ProducerSequences create(boolean idempotence) {
        SecureRandom random = new SecureRandom();
        return idempotence ? new ProducerSequences(random, randomId(random), (short) 0, false)
                : new ProducerSequences(random, RecordBatchFormat.NO_PRODUCER_ID, RecordBatchFormat.NO_PRODUCER_EPOCH,
                false);
    }

    /** A transactional producer's: no id until the coordinator {@link #assign assigns} one. */
    static ProducerSequences forTransactions() {
        return new ProducerSequences(new SecureRandom(), RecordBatchFormat.NO_PRODUCER_ID,
                RecordBatchFormat.NO_PRODUCER_EPOCH, true);
    }

    /** Takes the id and epoch the coordinator gave; every partition's sequences start at 0 again. */
    synchronized void assign(long producerId, short epoch) {
        this.producerId = producerId;
        this.epoch = epoch;
        next.clear();
        broken = false;
    }

    boolean transactional() {
        return transactional;
    }

    /** Whether a batch failed without an answer since the last {@link #assign}: the sequences may have a gap. */
    boolean broken() {
        return broken;
    }

    private static long randomId(SecureRandom random) {
        return random.nextLong() & Long.MAX_VALUE;
    }

    synchronized long producerId() {
        return producerId;
    }

    synchronized short epoch() {
        return epoch;
    }

    /**
     * After a sent batch failed without an answer (delivery timeout): the broker may or may not have stored it, so
     * its partition's sequences may have a gap the broker would refuse every later batch for. A new producer id
     * starts every partition's sequences at 0 again (Kafka bumps the epoch for the same reason); batches already
     * built keep the id they were built with, and the broker still recognises their resends. Nothing when
     * idempotence is off.
     */
    synchronized void renew() {
        if (transactional) {
            broken = true;
        } else if (idempotent()) {
            producerId = randomId(random);
            next.clear();
        }
    }

    /**
     * The base sequence of a batch of {@code recordCount} records of {@code tp} about to be built; moves the
     * partition's counter past them. {@link RecordBatchFormat#NO_SEQUENCE} when idempotence is off.
     */
    synchronized int take(TopicPartition tp, int recordCount) {
        if (!idempotent()) {
            return RecordBatchFormat.NO_SEQUENCE;
        }
        int base = next.getOrDefault(tp, 0);
        next.put(tp, increment(base, recordCount));
        return base;
    }

    /**
     * After the broker refused (did not store) the batch built with {@code producerId} that took
     * {@code baseSequence}: continue from it, unless the id was renewed since (its sequences are gone).
     */
    synchronized void rewind(TopicPartition tp, long producerId, int baseSequence) {
        if (idempotent() && producerId == this.producerId) {
            next.put(tp, baseSequence);
        }
    }

    /** {@code sequence + count}, wrapping past {@link Integer#MAX_VALUE} to 0. */
    static int increment(int sequence, int count) {
        return sequence > Integer.MAX_VALUE - count ? count - (Integer.MAX_VALUE - sequence) - 1 : sequence + count;
    }

    private boolean idempotent() {
        return producerId != RecordBatchFormat.NO_PRODUCER_ID;
    }
}
