package io.tidemark.core.quota;

import com.codahale.metrics.MetricRegistry;
import io.tidemark.core.ManualClock;
import io.tidemark.core.auth.Caller;
import io.tidemark.core.auth.Principal;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ClientQuota;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class ClientQuotasTest {
    private static final Caller ALICE = new Caller(Principal.user("alice"), "10.0.0.1", false);
    private static final Caller BOB = new Caller(Principal.user("bob"), "10.0.0.2", false);

    private final ManualClock clock = new ManualClock(1_000_000);
    private final Map<String, ClientQuota> own = new HashMap<>();
    private final MetricRegistry registry = new MetricRegistry();
    private final ClientQuotas quotas = new ClientQuotas(1_000, ClientQuotas.UNLIMITED, () -> own, clock, registry);

    @Test
    void aPrincipalWithinItsRateIsNeverHeldAndOneAboveWaitsForWhatItSentBeyondASecondsBurst() {
        for (int second = 0; second < 5; second++) {
            assertEquals(0, quotas.produced(ALICE, 1_000), "a second's worth each second");
            clock.advance(1_000);
        }
        assertEquals(0, quotas.produced(ALICE, 1_000), "the burst");
        assertEquals(500, quotas.produced(ALICE, 500));
        assertEquals(1_500, quotas.produced(ALICE, 1_000), "what it used stays counted");
        clock.advance(1_500);
        assertEquals(0, quotas.produced(ALICE, 0), "back within its burst once the time passed");
        assertEquals(2, registry.meter("quota.produce.throttled").getCount());
        assertEquals(0, quotas.produced(BOB, 1_000), "each principal has its own");
    }

    @Test
    void oneAnswerWaitsAtMostTenSecondsButTheDebtStays() {
        assertEquals(ByteRate.MAX_THROTTLE_MS, quotas.produced(ALICE, 100_000));
        clock.advance(10_000);
        assertEquals(ByteRate.MAX_THROTTLE_MS, quotas.produced(ALICE, 0), "89 s of bytes still ahead");
    }

    @Test
    void ownQuotasWinBrokersAreNeverHeldAndUnlimitedCountsNothing() {
        own.put("User:alice", ClientQuota.newBuilder().setPrincipal("User:alice").setProduceBytesPerSecond(100)
                .setFetchBytesPerSecond(10).build());
        assertEquals(1_000, quotas.produced(ALICE, 200), "100 B/s of its own: 2 s ahead, 1 s over the burst");
        assertEquals(4_000, quotas.fetched(ALICE, 50), "its own fetch rate over the unlimited default");
        assertEquals(0, quotas.fetched(BOB, 1 << 30), "the default: unlimited");
        assertEquals(0, quotas.produced(new Caller(Principal.user("CN=broker-1"), "10.0.0.9", true), 1 << 30));
        own.put("User:alice", ClientQuota.newBuilder().setPrincipal("User:alice").setProduceBytesPerSecond(-1)
                .build());
        assertEquals(0, quotas.produced(ALICE, 1 << 30), "unlimited of its own");
    }

    @Test
    void aQuotaIsAUserAndRatesOfMinusOneOrMore() {
        ClientQuota quota = ClientQuota.newBuilder().setPrincipal("User:alice").setProduceBytesPerSecond(5).build();
        assertEquals(quota, ClientQuotas.checked(quota));
        TidemarkException rate = assertThrows(TidemarkException.class, () -> ClientQuotas.checked(quota.toBuilder()
                .setFetchBytesPerSecond(-2).build()));
        assertEquals(ErrorCode.INVALID_REQUEST, rate.code());
        assertEquals("a fetch quota of -2 bytes a second for User:alice; allowed: a positive rate, 0 for the broker's "
                + "default or -1 for unlimited", rate.getMessage());
        TidemarkException principal = assertThrows(TidemarkException.class, () -> ClientQuotas.checked(quota
                .toBuilder().setPrincipal("alice").build()));
        assertEquals("a quota's principal: 'alice' is not a principal; write TYPE:NAME, e.g. User:alice",
                principal.getMessage());
        assertEquals("a quota's principal is of type User, not 'Group:ops'", assertThrows(TidemarkException.class,
                () -> ClientQuotas.checked(quota.toBuilder().setPrincipal("Group:ops").build())).getMessage());
    }
}
