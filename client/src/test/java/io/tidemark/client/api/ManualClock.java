package io.tidemark.client.api;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock that moves only when a test moves it. Thread-safe. */
final class ManualClock extends Clock {
    private final AtomicLong millis;

    ManualClock(long startMs) {
        this.millis = new AtomicLong(startMs);
    }

    void advance(long ms) {
        millis.addAndGet(ms);
    }

    void set(long ms) {
        millis.set(ms);
    }

    @Override
    public long millis() {
        return millis.get();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
