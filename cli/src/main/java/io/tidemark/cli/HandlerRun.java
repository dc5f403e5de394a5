package io.tidemark.cli;

import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.ConsumerRuntime;
import io.tidemark.client.api.Outcome;
import io.tidemark.client.api.PipelineHandler;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.RecordHandler;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.regex.Pattern;

/**
 * {@code tidemark consume --mode ...}: a {@link ConsumerRuntime} with a built-in handler, for trying the commit modes
 * and outcomes by hand. The handler prints each record it handles and answers {@code ack()}, except for a record
 * whose value matches {@code --fail-matching}, for which it answers {@code retry()} (or {@code retryAfter} with
 * {@code --retry-after}); with {@code --copy-to} it also sends the record (key, value, headers, SendTime) to that
 * topic, in the window's transaction in Transactional mode (a producer with a transactional id of its own,
 * {@code tidemark-consume-<group>-<random>}: the group's member epochs fence a stale process). It stops after
 * {@code --max-records} records printed (those handed out beyond it are left unfinished, so Tracked mode commits
 * below them), when no record came for {@code --timeout}, or when the runtime stops on a failure; then it prints
 * what the runtime did to standard error.
 */
final class HandlerRun {
    /** How long the closing runtime gives handlers left waiting beyond {@code --max-records}. */
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(1);
    private static final long CHECK_MS = 100;

    private final ConsumerRuntime.Builder runtime;
    private final Long maxRecords;
    private final Duration idle;
    private final AtomicLong printed = new AtomicLong();
    private final AtomicLong lastHandledNanos = new AtomicLong(System.nanoTime());
    private final CountDownLatch enough = new CountDownLatch(1);

    /**
     * @param consumer the runtime's consumer: the group, where it starts, its isolation level
     * @param print prints a record (the command's format); called by one worker at a time
     * @param fail       values for which the handler answers retry(); null for none
     * @param retryAfter with {@code fail}: answer retryAfter(this) instead; null for retry()
     * @param delayTiers the tiers that keep delayed retries; used with {@code retryAfter}
     */
    HandlerRun(ClientOptions client, ConsumerConfig consumer, String topic, ConsumerRuntime.CommitMode mode,
               int workers, Pattern fail, Duration retryAfter, List<Duration> delayTiers, Integer maxAttempts,
               String retryTopic, String deadLetterTopic, String copyTo, Long maxRecords, Duration idle,
               PrintWriter out, BiConsumer<PrintWriter, ConsumerRecord> print) {
        this.maxRecords = maxRecords;
        this.idle = idle;
        Outcome failed = retryAfter == null ? Outcome.retry() : Outcome.retryAfter(retryAfter);
        RecordHandler handler = record -> handle(record, fail, failed, out, print);
        this.runtime = (copyTo == null ? ConsumerRuntime.builder(consumer, handler)
                : ConsumerRuntime.pipeline(consumer, copyingTo(copyTo, handler)))
                .topics(List.of(topic)).mode(mode).workers(workers).closeTimeout(CLOSE_TIMEOUT);
        if (maxAttempts != null) {
            runtime.maxAttempts(maxAttempts);
        }
        if (retryTopic != null) {
            runtime.retryTopic(retryTopic);
        }
        if (deadLetterTopic != null) {
            runtime.deadLetterTopic(deadLetterTopic);
        }
        if (retryAfter != null) {
            runtime.delayTiers(delayTiers);
        }
        if (maxAttempts != null || retryTopic != null || deadLetterTopic != null || retryAfter != null
                || copyTo != null || mode == ConsumerRuntime.CommitMode.TRANSACTIONAL) {
            runtime.producer(producer(client, mode, consumer.group().orElseThrow()));
        }
    }

    /**
     * The handler of {@code --copy-to}: answers as {@code handler} does, and sends the record (key, value, headers,
     * SendTime) to {@code copyTo}.
     */
    static PipelineHandler copyingTo(String copyTo, RecordHandler handler) {
        return (record, output) -> {
            Outcome outcome = handler.handle(record);
            output.send(new ProducerRecord(copyTo, null, record.key(), record.value(), record.sendTimeMs(),
                    record.headers()));
            return outcome;
        };
    }

    /**
     * The producer of a runtime of {@code group}; in Transactional mode with a transactional id of its own,
     * {@code tidemark-consume-<group>-<random>} (the group's member epochs fence a stale process).
     */
    static ProducerConfig producer(ClientOptions client, ConsumerRuntime.CommitMode mode, String group) {
        ProducerConfig.Builder producer = client.producerConfig();
        if (mode == ConsumerRuntime.CommitMode.TRANSACTIONAL) {
            producer.transactionalId("tidemark-consume-" + group + "-" + UUID.randomUUID());
        }
        return producer.build();
    }

    private Outcome handle(ConsumerRecord record, Pattern fail, Outcome failed, PrintWriter out,
                           BiConsumer<PrintWriter, ConsumerRecord> print) throws InterruptedException {
        long count = printed.incrementAndGet();
        if (maxRecords != null && count > maxRecords) {
            enough.countDown();
            new CountDownLatch(1).await();
        }
        synchronized (out) {
            print.accept(out, record);
            out.flush();
        }
        lastHandledNanos.set(System.nanoTime());
        if (maxRecords != null && count == maxRecords) {
            enough.countDown();
        }
        String value = record.value() == null ? "" : new String(record.value(), StandardCharsets.UTF_8);
        return fail != null && fail.matcher(value).find() ? failed : Outcome.ack();
    }

    /** Runs until it has printed enough, was idle for long enough, or the runtime stopped; 0, or 1 on a failure. */
    int run(PrintWriter err) throws InterruptedException {
        ConsumerRuntime started = runtime.start();
        try {
            while (!enough.await(CHECK_MS, TimeUnit.MILLISECONDS) && started.running()) {
                if (idle != null && System.nanoTime() - lastHandledNanos.get() >= idle.toNanos()) {
                    break;
                }
            }
        } finally {
            started.close();
        }
        err.println(started.counts());
        if (started.failure().isPresent()) {
            err.println("stopped: " + started.failure().get());
            return 1;
        }
        return 0;
    }
}
