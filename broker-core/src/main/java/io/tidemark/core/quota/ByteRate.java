package io.tidemark.core.quota;

/**
 * One principal's use of one quota, as a virtual clock (the generic cell rate algorithm): each request of {@code B}
 * bytes moves the time at which the principal has used nothing ahead by {@code B / rate} seconds, from now if that
 * time is already past. A principal within its rate keeps that time at or before now; one above it runs ahead, and
 * the distance beyond a burst of {@value #BURST_MS} ms is how long its answer is held back. A request never waits for
 * itself more than {@link #MAX_THROTTLE_MS}, but what it used stays counted, so the next requests wait on.
 *
 * <p>O(1) per request, no timer; synchronized per principal and quota (one request at a time updates it).
 */
final class ByteRate {
    /** Bytes a principal may send at once above its rate before it waits: one second's worth. */
    static final long BURST_MS = 1_000;
    /** The longest one answer is held back (Kafka's cap is its quota window, about as long). */
    static final long MAX_THROTTLE_MS = 10_000;

    /** Where the virtual clock stands, in microseconds of the injected clock's epoch. */
    private long usedUntilMicros = Long.MIN_VALUE;

    /**
     * Records {@code bytes} used at {@code nowMs} against {@code bytesPerSecond}. A request's bytes are at most
     * {@code max.request.bytes} or {@code max.fetch.bytes} (1 GiB), so the sums stay far from overflowing.
     *
     * @return how long to hold the answer back, in ms: 0 within the rate and its burst
     */
    synchronized long record(long bytes, long bytesPerSecond, long nowMs) {
        long nowMicros = nowMs * 1_000;
        long start = Math.max(usedUntilMicros, nowMicros);
        usedUntilMicros = start + bytes * 1_000_000L / bytesPerSecond;
        long aheadMs = (usedUntilMicros - nowMicros) / 1_000 - BURST_MS;
        return Math.max(0, Math.min(aheadMs, MAX_THROTTLE_MS));
    }
}
