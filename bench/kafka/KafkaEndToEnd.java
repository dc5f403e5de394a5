import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Kafka's side of {@code tidemark perf end-to-end}, step for step, for a side-by-side run
 * (bench/end-to-end-side-by-side.sh): a producer (acks=all, linger.ms LINGER_MS, default 0) sends RATE records/s for
 * SECONDS, record {@code i} due {@code i / RATE} s after the start (sent up to 2 ms early, so in bursts of 2 ms, as
 * ProducerPerformance and tidemark perf pace), key its 8-byte sequence number, value RECORD_SIZE
 * random bytes, its timestamp (CreateTime) set by the producer at send; a consumer in the same process, without a
 * group, assigned every partition at its end before the first send, polls them (Kafka's defaults: fetch.min.bytes 1,
 * fetch.max.wait.ms 500). A record's latency is the wall clock at the poll that returned it minus its timestamp, for
 * the records sent WARMUP_SECONDS (default 5) or more after the start, in an HdrHistogram of ms. Prints the
 * acknowledgements' line and the summary line of {@code tidemark perf end-to-end}; exits 1 when a send failed, a
 * sequence number is missing or came twice.
 *
 * <p>Run with the harness' class path: {@code java -cp "$K/target/classes:$K/target/lib/*" KafkaEndToEnd.java
 * BOOTSTRAP TOPIC RATE SECONDS RECORD_SIZE [WARMUP_SECONDS [LINGER_MS]]}. Bounded: the reader gives up 60 s after
 * SECONDS.
 */
public final class KafkaEndToEnd {
    private static final Duration POLL = Duration.ofMillis(100);
    private static final long FINISH_TIMEOUT_MS = 60_000;
    /** A record due sooner than this goes at once: bursts of 2 ms, as ProducerPerformance's ThroughputThrottler. */
    private static final long PACING_STEP_NANOS = 2_000_000;

    public static void main(String[] args) throws InterruptedException {
        String bootstrap = args[0];
        String topic = args[1];
        long rate = Long.parseLong(args[2]);
        long seconds = Long.parseLong(args[3]);
        int recordSize = Integer.parseInt(args[4]);
        long warmupMs = args.length > 5 ? Long.parseLong(args[5]) * 1000 : 5_000;
        String linger = args.length > 6 ? args[6] : "0";
        long planned = rate * seconds;
        Properties consumerProps = new Properties();
        consumerProps.put("bootstrap.servers", bootstrap);
        consumerProps.put("max.poll.records", "10000");
        Properties producerProps = new Properties();
        producerProps.put("bootstrap.servers", bootstrap);
        producerProps.put("acks", "all");
        producerProps.put("linger.ms", linger);
        try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(consumerProps, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = reader.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
            reader.assign(partitions);
            reader.seekToEnd(partitions);
            partitions.forEach(reader::position);
            System.out.printf("reading %s from its end (partitions: %d); sending %d records at %d/s%n", topic,
                    partitions.size(), planned, rate);
            long startMs = System.currentTimeMillis();
            long deadlineMs = startMs + seconds * 1000 + FINISH_TIMEOUT_MS;
            AtomicLong sent = new AtomicLong();
            AtomicLong failed = new AtomicLong();
            AtomicReference<String> firstFailure = new AtomicReference<>();
            Recorder ackMicros = new Recorder(3);
            Thread source = new Thread(() -> {
                byte[] value = new byte[recordSize];
                new Random(1).nextBytes(value);
                long startNanos = System.nanoTime();
                try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps,
                        new ByteArraySerializer(), new ByteArraySerializer())) {
                    for (long i = 0; i < planned && System.currentTimeMillis() < deadlineMs; i++) {
                        long due = startNanos + i * 1_000_000_000L / rate;
                        if (due - System.nanoTime() >= PACING_STEP_NANOS) {   // as tidemark perf's pacing
                            for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
                                LockSupport.parkNanos(wait);
                            }
                        }
                        long sentAt = System.nanoTime();
                        producer.send(new ProducerRecord<>(topic, ByteBuffer.allocate(8).putLong(i).array(), value),
                                (metadata, e) -> {
                                    if (e == null) {
                                        ackMicros.recordValue(Math.max(1, (System.nanoTime() - sentAt) / 1000));
                                    } else {
                                        failed.incrementAndGet();
                                        firstFailure.compareAndSet(null, e.toString());
                                    }
                                });
                        sent.incrementAndGet();
                    }
                }
            }, "source");
            source.start();
            BitSet seen = new BitSet();
            Histogram latencyMs = new Histogram(3);
            long distinct = 0;
            long duplicates = 0;
            long nowMs = startMs;
            long lastReportMs = startMs;
            while (nowMs < deadlineMs && (source.isAlive() || distinct + failed.get() < sent.get())) {
                var records = reader.poll(POLL);
                nowMs = System.currentTimeMillis();
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    long sequence = ByteBuffer.wrap(record.key()).getLong();
                    if (seen.get((int) sequence)) {
                        duplicates++;
                        continue;
                    }
                    seen.set((int) sequence);
                    distinct++;
                    if (record.timestamp() >= startMs + warmupMs) {
                        latencyMs.recordValue(Math.max(0, nowMs - record.timestamp()));
                    }
                }
                if (nowMs - lastReportMs >= 5_000) {
                    System.out.printf(Locale.ROOT, "%.1f s: sent %d, read distinct %d, duplicates %d, latency ms "
                                    + "p50 %d p99 %d max %d so far%n", (nowMs - startMs) / 1000.0, sent.get(),
                            distinct, duplicates, latencyMs.getValueAtPercentile(50),
                            latencyMs.getValueAtPercentile(99), latencyMs.getMaxValue());
                    lastReportMs = nowMs;
                }
            }
            source.join();
            Histogram acks = ackMicros.getIntervalHistogram();
            System.out.printf(Locale.ROOT, "acknowledged %d, ack latency ms p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f "
                            + "max %.1f%n", acks.getTotalCount(), acks.getValueAtPercentile(50) / 1000.0,
                    acks.getValueAtPercentile(90) / 1000.0, acks.getValueAtPercentile(99) / 1000.0,
                    acks.getValueAtPercentile(99.9) / 1000.0, acks.getMaxValue() / 1000.0);
            System.out.printf(Locale.ROOT, "end-to-end: sent %d, failed %d, read distinct %d, duplicates %d, "
                            + "measured %d, latency ms p50 %d p90 %d p99 %d p99.9 %d max %d%n", sent.get(),
                    failed.get(), distinct, duplicates, latencyMs.getTotalCount(), latencyMs.getValueAtPercentile(50),
                    latencyMs.getValueAtPercentile(90), latencyMs.getValueAtPercentile(99),
                    latencyMs.getValueAtPercentile(99.9), latencyMs.getMaxValue());
            if (failed.get() > 0 || distinct < sent.get() || duplicates > 0) {
                System.err.println("error: " + failed.get() + " sends failed (the first: " + firstFailure.get()
                        + "), " + (sent.get() - distinct) + " sequence numbers missing, " + duplicates
                        + " duplicates");
                System.exit(1);
            }
        }
    }
}
