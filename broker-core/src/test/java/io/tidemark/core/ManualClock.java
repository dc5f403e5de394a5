package io.tidemark.core;

import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicLong;

/** A clock tests set and step, forward and back. */
public final class ManualClock implements InstantSource {
    private final AtomicLong nowMs;

    public ManualClock(long nowMs) {
        this.nowMs = new AtomicLong(nowMs);
    }

    @Override
    public long millis() {
        return nowMs.get();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(nowMs.get());
    }

    public void set(long ms) {
        nowMs.set(ms);
    }

    public void advance(long ms) {
        nowMs.addAndGet(ms);
    }
}
