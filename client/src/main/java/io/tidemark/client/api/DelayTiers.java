package io.tidemark.client.api;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * Durable delayed retries through tiers of topics, one per delay of a ladder (1 s, 10 s, 1 min, ...): a retry after
 * {@code d} is written at once, with its due time in the {@link RetryHeaders#DUE} header, to the tier of the largest
 * delay at most {@code d} (the smallest tier when {@code d} is below every delay), named
 * {@code <retry topic>.delay-<delay>} ({@code orders.delay-10s}). Nothing is held in memory: a crash loses no
 * scheduled retry, and the attempt count travels in the record.
 *
 * <p>Why tiers: a reader must find due records without scanning. Every record of a tier waits at least the tier's
 * delay after its ReceiveTime, and ReceiveTime never decreases in a partition, so a tier partition comes due in log
 * order: its reader looks at the head alone. At the head a record is <em>ripe</em> at {@code min(due, ReceiveTime +
 * delay)}; before that the partition is paused and the record fetched again when it is ripe. Ripe and due, it is
 * delivered. Ripe and not yet due (it asked for more than its tier's delay, or the broker's clock is behind the
 * runtime's) it moves to the tier of its remaining time (a copy with the same attempt and due time; the original
 * completes once the copy is stored), or, with less left than the smallest delay, waits at the head until due.
 *
 * <p>What bounds the wait: a record is never delivered before its due time on the runtime's clock; it is late by at
 * most the smallest delay (a record behind a head that waits out its last moments, or a delay below every tier), plus
 * the time a poll takes, plus the difference between the brokers' and the runtimes' clocks when the brokers' run
 * ahead; a record moves at most once per tier below its first. Across tiers, records come due in due order within
 * that bound.
 *
 * <p>Stateless but for its settings; thread-safe.
 */
final class DelayTiers {
    /** What the reader of a tier does with the record at the head of a partition. */
    sealed interface Decision permits Deliver, WaitUntil, MoveTo {
    }

    /** The record is due: hand it to the handler. */
    record Deliver() implements Decision {
    }

    /** Not ripe (or due within the smallest delay): fetch it again at {@code timeMs} (the runtime's clock). */
    record WaitUntil(long timeMs) implements Decision {
    }

    /** Ripe, with at least the smallest delay left: copy it to {@code topic}. */
    record MoveTo(String topic) implements Decision {
    }

    private final List<Long> delaysMs;
    private final List<String> topics;
    private final Map<String, Integer> tierOfTopic = new HashMap<>();

    /**
     * @param delays the ladder, ascending, each from 1 ms to 7 days
     * @throws IllegalArgumentException naming the delay that is out of range or order
     */
    DelayTiers(String retryTopic, List<Duration> delays) {
        if (delays.isEmpty()) {
            throw new IllegalArgumentException("delayTiers is empty; give at least one delay");
        }
        List<Long> ms = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (Duration delay : delays) {
            long delayMs = delay.toMillis();
            if (delayMs < 1 || delay.compareTo(Duration.ofDays(7)) > 0) {
                throw new IllegalArgumentException("delay tier " + delay + " is not allowed; each must be from 1 ms "
                        + "to 7 days");
            }
            if (!ms.isEmpty() && delayMs <= ms.get(ms.size() - 1)) {
                throw new IllegalArgumentException("delay tiers " + delays + " must ascend");
            }
            ms.add(delayMs);
            String topic = retryTopic + ".delay-" + name(delayMs);
            tierOfTopic.put(topic, names.size());
            names.add(topic);
        }
        this.delaysMs = List.copyOf(ms);
        this.topics = List.copyOf(names);
    }

    /** "500ms", "10s", "5m", "2h": the largest unit that divides the delay. */
    static String name(long delayMs) {
        if (delayMs % 3_600_000 == 0) {
            return delayMs / 3_600_000 + "h";
        }
        if (delayMs % 60_000 == 0) {
            return delayMs / 60_000 + "m";
        }
        if (delayMs % 1_000 == 0) {
            return delayMs / 1_000 + "s";
        }
        return delayMs + "ms";
    }

    /** The tier topics, by ascending delay. */
    List<String> topics() {
        return topics;
    }

    boolean isTier(String topic) {
        return tierOfTopic.containsKey(topic);
    }

    /** The topic of the tier for a wait of {@code delayMs}: the largest delay at most it, else the smallest. */
    String topicFor(long delayMs) {
        int tier = 0;
        for (int i = 0; i < delaysMs.size(); i++) {
            if (delaysMs.get(i) <= delayMs) {
                tier = i;
            }
        }
        return topics.get(tier);
    }

    /**
     * What to do with the record of tier {@code topic} received at {@code receiveTimeMs} and due at {@code dueMs},
     * at {@code nowMs}, as the class says.
     */
    Decision decide(String topic, long receiveTimeMs, long dueMs, long nowMs) {
        OptionalInt tier = tierOf(topic);
        if (tier.isEmpty()) {
            throw new IllegalArgumentException(topic + " is not a delay tier of " + topics);
        }
        long ripeMs = Math.min(dueMs, saturatedAdd(receiveTimeMs, delaysMs.get(tier.getAsInt())));
        if (nowMs < ripeMs) {
            return new WaitUntil(ripeMs);
        }
        if (nowMs >= dueMs) {
            return new Deliver();
        }
        long remainingMs = dueMs - nowMs;
        return remainingMs < delaysMs.get(0) ? new WaitUntil(dueMs) : new MoveTo(topicFor(remainingMs));
    }

    private OptionalInt tierOf(String topic) {
        Integer tier = tierOfTopic.get(topic);
        return tier == null ? OptionalInt.empty() : OptionalInt.of(tier);
    }

    private static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
    }
}
