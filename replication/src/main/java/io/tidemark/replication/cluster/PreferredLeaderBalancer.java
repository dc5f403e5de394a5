package io.tidemark.replication.cluster;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.replication.partition.LeaderView;
import io.tidemark.replication.partition.PartitionGroup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Hands the leadership of partition groups back to their preferred replicas (the first of a group's replica list), so
 * that leaders spread evenly again after a failover ({@link ReplicatedTopics} spreads the preferred replicas evenly,
 * and so the groups). Every {@code leader.balance.interval.ms} it reads the groups this broker leads, asks
 * {@link LeaderBalancePolicy} which to move, and moves them one after the other the way {@code tidemark leader
 * transfer} does ({@link RaftLeadership}). Each broker balances only the groups it leads: a group has one leader, so
 * one broker decides about it and the brokers need not agree on anything.
 *
 * <p>Since when this broker leads a group is what it observed: the first pass that saw it lead in the current Raft
 * term (after a restart of this broker every tenure starts again). A transfer that fails restarts the tenure, so the
 * group waits another interval and goes behind those that waited longer, and a replica that cannot take over is
 * tried once per interval.
 *
 * <p>Metrics: {@code leader-balance.transfers} counts completed transfers; the gauge
 * {@code leader-balance.groups-led-away} is how many groups this broker led away from their preferred replica at
 * the last pass (summed over the brokers: 0 when balanced); the gauges {@code leader-balance.held.<reason>}
 * split those that did not move by why ({@link LeaderBalancePolicy.Reason}, e.g. {@code held.preferred-behind}).
 * When the reason a group stays changes, one log line says why, with the figures. With
 * {@code leader.balance.enabled=0} the passes still run for the gauges and move nothing.
 *
 * <p>Threading: one thread, {@code tidemark-leader-balance}, runs every pass and alone touches the tenures and the
 * transfer times and the last reasons; the gauges read volatiles.
 */
public final class PreferredLeaderBalancer implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(PreferredLeaderBalancer.class);
    /** How long one transfer may take, as for TransferLeadership without a timeout: a stuck one then gives up. */
    private static final long TRANSFER_TIMEOUT_MS = 10_000;

    /**
     * A partition group this broker leads, as it looks now; its replicas, the preferred one first.
     *
     * @param prioritiesEqual whether every replica has the same Raft priority in the group's configuration
     */
    record Leading(UUID group, List<Integer> replicas, LeaderView view, boolean prioritiesEqual) {
    }

    /** Moves a group's leadership ({@link RaftLeadership}). */
    interface GroupLeadership {
        /** @throws TidemarkException when it did not move */
        void move(UUID group, int toNodeId, long timeoutMs);

        /**
         * Sets every replica's priority equal again, in a group whose configuration prefers one.
         *
         * @throws TidemarkException when the configuration did not change
         */
        void equalizePriorities(UUID group, List<Integer> replicas);
    }

    private record Tenure(long term, long sinceMs) {
    }

    private final BrokerConfig.LeaderBalance settings;
    private final LeaderBalancePolicy policy;
    private final Supplier<List<Leading>> leading;
    private final LeaderBalancePolicy.Reachability reachability;
    private final GroupLeadership leadership;
    private final InstantSource clock;
    private final Counter transfers;
    private final Map<UUID, Tenure> tenures = new HashMap<>();
    private final Deque<Long> transferStartsMs = new ArrayDeque<>();
    private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "tidemark-leader-balance");
        thread.setDaemon(true);
        return thread;
    });
    private final Map<UUID, LeaderBalancePolicy.Reason> heldFor = new HashMap<>();
    private volatile int ledAway;
    private volatile Map<LeaderBalancePolicy.Reason, Long> heldByReason = Map.of();

    /**
     * @param followerSilenceMsMax a preferred replica that has not answered its leader for longer is taken as down
     */
    PreferredLeaderBalancer(int nodeId, BrokerConfig.LeaderBalance settings, long followerSilenceMsMax,
                            Supplier<List<Leading>> leading, LeaderBalancePolicy.Reachability reachability,
                            GroupLeadership leadership, InstantSource clock, MetricRegistry registry) {
        this.settings = settings;
        this.policy = new LeaderBalancePolicy(nodeId, settings.intervalMs(), settings.maxTransfersPerInterval(),
                followerSilenceMsMax, PartitionGroup.MAX_ENTRIES_IN_FLIGHT);
        this.leading = leading;
        this.reachability = reachability;
        this.leadership = leadership;
        this.clock = clock;
        this.transfers = registry.counter("leader-balance.transfers");
        registry.gauge("leader-balance.groups-led-away", () -> (Gauge<Integer>) () -> ledAway);
        for (LeaderBalancePolicy.Reason reason : LeaderBalancePolicy.Reason.values()) {
            registry.gauge("leader-balance.held." + reason.name().toLowerCase(Locale.ROOT).replace('_', '-'),
                    () -> (Gauge<Long>) () -> heldByReason.getOrDefault(reason, 0L));
        }
    }

    /**
     * Balances the partition groups of {@code replicas} that this broker leads, from one interval after now. A
     * preferred replica counts as down once it has not answered its leader for the longest election timeout, as
     * Ratis judges its followers.
     */
    static PreferredLeaderBalancer start(BrokerConfig config, PartitionReplicas replicas,
                                         LeaderBalancePolicy.Reachability reachability, GroupLeadership leadership,
                                         InstantSource clock, MetricRegistry registry) {
        Supplier<List<Leading>> leading = () -> replicas.groupsHere().stream()
                .flatMap(g -> g.leaderView().map(v -> new Leading(g.id().getUuid(), g.replicas(), v,
                        g.prioritiesEqual())).stream())
                .toList();
        PreferredLeaderBalancer balancer = new PreferredLeaderBalancer(config.nodeId(), config.leaderBalance(),
                config.raft().electionTimeoutMaxMs(), leading, reachability, leadership, clock, registry);
        long intervalMs = config.leaderBalance().intervalMs();
        balancer.executor.scheduleWithFixedDelay(balancer::runPassLogged, intervalMs, intervalMs,
                TimeUnit.MILLISECONDS);
        return balancer;
    }

    private void runPassLogged() {
        try {
            runPass();
        } catch (RuntimeException e) {
            LOG.error("Leader balance pass failed; the next one runs in {} ms", settings.intervalMs(), e);
        }
    }

    /**
     * One pass: set equal priorities where a group prefers a replica, observe, decide, transfer. Runs on the balancer's
     * thread (or a test's).
     */
    void runPass() {
        long nowMs = clock.millis();
        List<Leading> now = leading.get();
        equalizePriorities(now);
        List<LeaderBalancePolicy.Led> led = observe(nowMs, now);
        ledAway = policy.ledAway(led);
        record(policy.holds(nowMs, led, reachability));
        if (!settings.enabled()) {
            return;
        }
        while (!transferStartsMs.isEmpty() && nowMs - transferStartsMs.peekFirst() >= settings.intervalMs()) {
            transferStartsMs.removeFirst();
        }
        for (LeaderBalancePolicy.Transfer transfer : policy.plan(nowMs, led, List.copyOf(transferStartsMs),
                reachability)) {
            transferStartsMs.addLast(nowMs);
            move(transfer, nowMs);
        }
    }

    /**
     * Sets equal priorities in each led group whose configuration prefers a replica (a new group, which starts so
     * that its preferred replica wins its first election, {@link ClusterMembers#peersPreferringFirst}; or one left so
     * by a move of a broker before equal priorities were kept throughout, which died before it set them back): Ratis
     * would make the others wait for that replica at every election.
     */
    private void equalizePriorities(List<Leading> now) {
        for (Leading l : now) {
            if (!l.prioritiesEqual()) {
                try {
                    leadership.equalizePriorities(l.group(), l.replicas());
                } catch (TidemarkException e) {
                    LOG.warn("{}; trying again in {} ms", e.getMessage(), settings.intervalMs());
                }
            }
        }
    }

    /** Pairs each led group with its tenure, starting a tenure for a group led in a new term. */
    private List<LeaderBalancePolicy.Led> observe(long nowMs, List<Leading> now) {
        Map<UUID, Tenure> current = new HashMap<>();
        List<LeaderBalancePolicy.Led> led = new ArrayList<>();
        for (Leading l : now) {
            Tenure previous = tenures.get(l.group());
            Tenure tenure = previous != null && previous.term() == l.view().term() ? previous
                    : new Tenure(l.view().term(), nowMs);
            current.put(l.group(), tenure);
            led.add(new LeaderBalancePolicy.Led(l.group(), l.replicas(), l.view(), tenure.sinceMs()));
        }
        tenures.clear();
        tenures.putAll(current);
        return led;
    }

    /** Counts the groups held by reason and logs each group whose reason changed since the last pass. */
    private void record(List<LeaderBalancePolicy.Hold> holds) {
        Map<UUID, LeaderBalancePolicy.Reason> now = new HashMap<>();
        for (LeaderBalancePolicy.Hold hold : holds) {
            now.put(hold.group(), hold.reason());
            if (hold.reason() != LeaderBalancePolicy.Reason.LED_RECENTLY && hold.reason() != heldFor.get(hold.group())) {
                LOG.info("Partition group {} stays led here, away from its preferred replica on node {}: {} ({})",
                        hold.group(), hold.preferredNodeId(), hold.reason(), hold.detail());
            }
        }
        heldFor.clear();
        heldFor.putAll(now);
        heldByReason = holds.stream().collect(Collectors.groupingBy(LeaderBalancePolicy.Hold::reason,
                () -> new EnumMap<>(LeaderBalancePolicy.Reason.class), Collectors.counting()));
    }

    private void move(LeaderBalancePolicy.Transfer transfer, long nowMs) {
        try {
            leadership.move(transfer.group(), transfer.toNodeId(), TRANSFER_TIMEOUT_MS);
            transfers.inc();
            LOG.info("Moved the leadership of partition group {} back to its preferred replica on node {}",
                    transfer.group(), transfer.toNodeId());
        } catch (TidemarkException e) {
            tenures.computeIfPresent(transfer.group(), (g, t) -> new Tenure(t.term(), nowMs));
            LOG.warn("Could not move the leadership of partition group {} back to node {}; trying again in {} ms: {}",
                    transfer.group(), transfer.toNodeId(), settings.intervalMs(), e.getMessage());
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
