package io.tidemark.core.quota;

import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import io.tidemark.core.auth.Caller;
import io.tidemark.core.auth.Principal;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ClientQuota;
import io.tidemark.proto.v1.ErrorCode;

import java.time.InstantSource;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * Per-principal byte rates through this broker, as Kafka's client quotas: produced bytes (each produce request's
 * batches) and fetched bytes (each fetch's answer) a second. A principal's own rates ({@link QuotaStore}, set by
 * {@code tidemark quotas}) win over the broker's defaults ({@code quota.produce.bytes.per.second},
 * {@code quota.fetch.bytes.per.second}); -1 is unlimited, and brokers are never held. A principal over its rate gets
 * its answer late, by the time that brings it back within it ({@link ByteRate}), and told so in the answer's
 * {@code throttle_time_ms}; the meters {@code quota.produce.throttled} and {@code quota.fetch.throttled} count the
 * answers held back.
 *
 * <p>Thread-safe.
 */
public final class ClientQuotas {
    /** A rate's value meaning no limit. */
    public static final long UNLIMITED = -1;

    private final long produceDefault;
    private final long fetchDefault;
    private final Supplier<Map<String, ClientQuota>> own;
    private final InstantSource clock;
    private final Map<Principal, ByteRate> produced = new ConcurrentHashMap<>();
    private final Map<Principal, ByteRate> fetched = new ConcurrentHashMap<>();
    private final Meter produceThrottled;
    private final Meter fetchThrottled;

    /** @param own the principals' own quotas, read at each request */
    public ClientQuotas(long produceDefault, long fetchDefault, Supplier<Map<String, ClientQuota>> own,
                        InstantSource clock, MetricRegistry registry) {
        this.produceDefault = produceDefault;
        this.fetchDefault = fetchDefault;
        this.own = own;
        this.clock = clock;
        this.produceThrottled = registry.meter("quota.produce.throttled");
        this.fetchThrottled = registry.meter("quota.fetch.throttled");
    }

    /** Records a produce request's bytes; returns how long to hold its answer back, in ms (0: not at all). */
    public long produced(Caller caller, long bytes) {
        return record(caller, bytes, produced, ClientQuota::getProduceBytesPerSecond, produceDefault,
                produceThrottled);
    }

    /** Records a fetch answer's bytes; returns how long to hold it back, in ms (0: not at all). */
    public long fetched(Caller caller, long bytes) {
        return record(caller, bytes, fetched, ClientQuota::getFetchBytesPerSecond, fetchDefault, fetchThrottled);
    }

    private long record(Caller caller, long bytes, Map<Principal, ByteRate> rates,
                        ToLongFunction<ClientQuota> ownRate, long defaultRate, Meter throttled) {
        if (caller.broker()) {
            return 0;
        }
        ClientQuota quota = own.get().get(caller.principal().toString());
        long rate = quota == null || ownRate.applyAsLong(quota) == 0 ? defaultRate : ownRate.applyAsLong(quota);
        if (rate == UNLIMITED) {
            return 0;
        }
        long throttleMs = rates.computeIfAbsent(caller.principal(), p -> new ByteRate()).record(bytes, rate,
                clock.millis());
        if (throttleMs > 0) {
            throttled.mark();
        }
        return throttleMs;
    }

    /**
     * The quota as stored: a principal {@code User:NAME}, each rate -1 (unlimited), 0 (the broker's default) or
     * positive.
     *
     * @throws TidemarkException INVALID_REQUEST naming what is wrong
     */
    public static ClientQuota checked(ClientQuota quota) {
        try {
            Principal principal = Principal.parse(quota.getPrincipal(), "a quota's principal");
            if (!principal.type().equals(Principal.USER)) {
                throw new TidemarkException(ErrorCode.INVALID_REQUEST, "a quota's principal is of type User, not '"
                        + quota.getPrincipal() + "'");
            }
        } catch (IllegalArgumentException e) {
            throw new TidemarkException(ErrorCode.INVALID_REQUEST, e.getMessage());
        }
        checkRate("produce", quota.getProduceBytesPerSecond(), quota.getPrincipal());
        checkRate("fetch", quota.getFetchBytesPerSecond(), quota.getPrincipal());
        return quota;
    }

    private static void checkRate(String kind, long rate, String principal) {
        if (rate < UNLIMITED) {
            throw new TidemarkException(ErrorCode.INVALID_REQUEST, "a " + kind + " quota of " + rate
                    + " bytes a second for " + principal + "; allowed: a positive rate, 0 for the broker's default or "
                    + "-1 for unlimited");
        }
    }
}
