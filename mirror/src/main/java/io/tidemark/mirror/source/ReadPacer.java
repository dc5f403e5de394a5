package io.tidemark.mirror.source;

/**
 * Keeps the mirror's reading from the source at or below a byte rate ({@code --max-bytes-per-second}), for a link
 * between datacenters the mirror must not fill. The source loop reports the bytes of each poll's records and polls
 * again only when they are paid for: after {@code bytes / rate} seconds from the later of the previous poll's due
 * time and now. So the rate holds on average over any stretch longer than one poll, a poll may come in one burst,
 * and time spent idle is not saved up for a later burst.
 *
 * <p>Pure: the caller passes the time. Not thread-safe: the source loop owns it.
 */
final class ReadPacer {
    private static final long NANOS_PER_MS = 1_000_000;
    private static final long NANOS_PER_SECOND = 1_000_000_000;

    private final long bytesPerSecond;
    /** When the next poll is due, in nanoseconds of the millisecond clock the caller passes. */
    private long dueNanos = Long.MIN_VALUE;

    /** @param bytesPerSecond the rate; 0 for no limit */
    ReadPacer(long bytesPerSecond) {
        if (bytesPerSecond < 0) {
            throw new IllegalArgumentException("bytes per second " + bytesPerSecond + " is negative");
        }
        this.bytesPerSecond = bytesPerSecond;
    }

    /** Milliseconds to wait before the next poll at {@code nowMs}; 0 when it may poll now. */
    long waitMs(long nowMs) {
        if (bytesPerSecond == 0 || dueNanos == Long.MIN_VALUE) {
            return 0;
        }
        long waitNanos = dueNanos - nowMs * NANOS_PER_MS;
        return waitNanos <= 0 ? 0 : (waitNanos + NANOS_PER_MS - 1) / NANOS_PER_MS;
    }

    /** A poll at {@code nowMs} read {@code bytes}. */
    void read(long bytes, long nowMs) {
        if (bytesPerSecond == 0) {
            return;
        }
        long start = Math.max(dueNanos, nowMs * NANOS_PER_MS);
        dueNanos = start + (long) ((double) bytes * NANOS_PER_SECOND / bytesPerSecond);
    }
}
