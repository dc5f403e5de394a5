package io.tidemark.cli;

import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.TidemarkProducer;
import org.HdrHistogram.Recorder;

import java.nio.ByteBuffer;
import java.time.InstantSource;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A load source of the latency benchmarks ({@code perf pipeline}, {@code perf end-to-end}): sends record {@code i}
 * of {@code planned} when it is due, {@code i / rate} s after {@code startNanos}, to one topic: key the 8-byte
 * big-endian sequence number {@code i} ({@link #key}), value {@code recordSize} random bytes (seeded), SendTime
 * stamped by the producer's clock. Stops at the planned count, the deadline or {@link #stop}, then closes its producer
 * (waiting for the acknowledgements, up to delivery.timeout.ms). Runs on its own thread; the counts are read by the
 * reader's.
 */
final class SequencedSource implements Runnable {
    final AtomicLong sent = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    final AtomicReference<String> firstFailure = new AtomicReference<>();
    /** Each acknowledged record's time from {@code send} to its acknowledgement, µs. */
    final Recorder ackMicros = new Recorder(3);
    /** What ended the loop early: a send that threw (no metadata, no buffer memory within max.block.ms). */
    volatile RuntimeException error;
    private final ProducerConfig producer;
    private final String topic;
    private final long rate;
    private final int recordSize;
    private final long planned;
    private final long startNanos;
    private final long deadlineMs;
    private final InstantSource clock;
    private final CountDownLatch finished = new CountDownLatch(1);
    private volatile boolean stopped;

    /**
     * @param producer   the producer's config; its clock stamps SendTime
     * @param startNanos when record 0 is due ({@link System#nanoTime})
     * @param deadlineMs when the loop stops at the latest, by {@code clock}
     */
    SequencedSource(ProducerConfig producer, String topic, long rate, int recordSize, long planned, long startNanos,
                    long deadlineMs, InstantSource clock) {
        this.producer = producer;
        this.topic = topic;
        this.rate = rate;
        this.recordSize = recordSize;
        this.planned = planned;
        this.startNanos = startNanos;
        this.deadlineMs = deadlineMs;
        this.clock = clock;
    }

    /** The key of record {@code sequence}: the number, 8 bytes big-endian. */
    static byte[] key(long sequence) {
        return ByteBuffer.allocate(Long.BYTES).putLong(sequence).array();
    }

    @Override
    public void run() {
        byte[] value = new byte[recordSize];
        new Random(1).nextBytes(value);
        try (TidemarkProducer sender = new TidemarkProducer(producer)) {
            for (long i = 0; i < planned && !stopped && clock.millis() < deadlineMs; i++) {
                PerfCommand.awaitDue(startNanos, i, rate);
                long sentAt = System.nanoTime();
                sender.send(new ProducerRecord(topic, key(i), value)).whenComplete((stored, e) -> {
                    if (e == null) {
                        ackMicros.recordValue(Math.max(1, (System.nanoTime() - sentAt) / 1000));
                    } else {
                        failed.incrementAndGet();
                        firstFailure.compareAndSet(null, PerfCommand.sendFailure(e));
                    }
                });
                sent.incrementAndGet();
            }
        } catch (RuntimeException e) {
            error = e;
        } finally {
            finished.countDown();
        }
    }

    /** Whether the source finished and {@code tally} saw every record it sent but those that failed. */
    boolean readAll(SequenceTally tally) {
        return finished.getCount() == 0 && tally.distinct() + failed.get() >= sent.get();
    }

    void stop() {
        stopped = true;
    }
}
