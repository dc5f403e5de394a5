package io.tidemark.replication.raft;

import com.codahale.metrics.Counter;
import com.codahale.metrics.MetricRegistry;
import com.google.common.util.concurrent.ThreadFactoryBuilder;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.protocol.TermIndex;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Every second, looks at the followers of every Raft group (the metadata group and the partition groups) this broker
 * leads, and steps down from a group whose follower is stuck ({@link StuckFollowers}): the next leader, this broker
 * again or another, starts with no belief about what the followers hold and offers the stuck one what it lacks. A
 * step-down is logged with the follower's match index and the leader's log, and counted
 * ({@code raft.stuck.follower.stepdowns}).
 *
 * <p>Reads each group's division info only (no Raft round); one thread, its own.
 */
public final class StuckFollowerWatch implements Closeable {
    /** How long a follower that answers stays behind at one match index before its leader steps down. */
    static final long STUCK_MS = 15_000;
    /**
     * A follower that answered this recently is up: heartbeats go every half the minimum election timeout (100 ms by
     * default). Election timeouts configured above 6 s leave the watch idle: no follower counts as answering.
     */
    static final long ANSWERED_MS_MAX = 3_000;
    static final long INTERVAL_MS = 1_000;
    private static final long STEP_DOWN_TIMEOUT_MS = 10_000;
    private static final Logger LOG = LoggerFactory.getLogger(StuckFollowerWatch.class);

    private final RaftServer server;
    private final InstantSource clock;
    private final StuckFollowers followers = new StuckFollowers(STUCK_MS, ANSWERED_MS_MAX);
    private final Counter stepDowns;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(
            new ThreadFactoryBuilder().setNameFormat("tidemark-stuck-follower-watch").setDaemon(true).build());

    private StuckFollowerWatch(RaftServer server, InstantSource clock, MetricRegistry registry) {
        this.server = server;
        this.clock = clock;
        this.stepDowns = registry.counter("raft.stuck.follower.stepdowns");
    }

    /** Watches the groups of {@code server} from one interval after now. */
    public static StuckFollowerWatch start(RaftServer server, InstantSource clock, MetricRegistry registry) {
        StuckFollowerWatch watch = new StuckFollowerWatch(server, clock, registry);
        watch.executor.scheduleWithFixedDelay(watch::checkLogged, INTERVAL_MS, INTERVAL_MS, TimeUnit.MILLISECONDS);
        return watch;
    }

    private void checkLogged() {
        try {
            check();
        } catch (RuntimeException e) {
            LOG.error("Looking for stuck Raft followers failed; the next look is in {} ms", INTERVAL_MS, e);
        }
    }

    private void check() {
        List<StuckFollowers.LeaderLog> leaders = new ArrayList<>();
        List<StuckFollowers.Follower> seen = new ArrayList<>();
        Map<String, RaftGroupId> ids = new HashMap<>();
        for (RaftGroupId groupId : server.getGroupIds()) {
            RaftServer.Division division;
            try {
                division = server.getDivision(groupId);
            } catch (IOException e) {
                continue;
            }
            Optional<Map<Integer, RaftFollower>> led = RaftFollower.seenBy(division.getInfo());
            if (led.isEmpty()) {
                continue;
            }
            RaftLog log = division.getRaftLog();
            TermIndex last = log.getLastEntryTermIndex();
            String group = groupId.toString();
            ids.put(group, groupId);
            leaders.add(new StuckFollowers.LeaderLog(group, division.getInfo().getCurrentTerm(), log.getStartIndex(),
                    last == null ? RaftLog.INVALID_LOG_INDEX : last.getIndex()));
            led.get().forEach((node, follower) -> seen.add(new StuckFollowers.Follower(group, node,
                    follower.matchIndex(), follower.lastResponseAgoMs())));
        }
        Set<String> steppedDown = new HashSet<>();
        for (StuckFollowers.Follower stuck : followers.observe(leaders, seen, clock.millis())) {
            if (steppedDown.add(stuck.groupId())) {
                StuckFollowers.LeaderLog log = leaders.stream().filter(l -> l.groupId().equals(stuck.groupId()))
                        .findFirst().orElseThrow();
                stepDown(ids.get(stuck.groupId()), stuck, log);
                followers.forget(stuck.groupId());
            }
        }
    }

    private void stepDown(RaftGroupId groupId, StuckFollowers.Follower stuck, StuckFollowers.LeaderLog log) {
        LOG.warn("Raft group {}: follower node {} answers but has stayed at match index {} for {} ms while this "
                        + "leader's log holds indices {} to {} (term {}); stepping down, so that the next leader offers "
                        + "it what it lacks", groupId, stuck.nodeId(), stuck.matchIndex(), STUCK_MS, log.startIndex(),
                log.lastIndex(), log.term());
        stepDowns.inc();
        try {
            server.transferLeadershipAsync(new TransferLeadershipRequest(clientId, server.getId(), groupId,
                    callIds.incrementAndGet(), null, STEP_DOWN_TIMEOUT_MS)).whenComplete((reply, failure) -> {
                        if (failure != null || !reply.isSuccess()) {
                            LOG.warn("Raft group {}: stepping down failed: {}", groupId,
                                    failure != null ? failure.toString() : reply.getException());
                        }
                    });
        } catch (IOException e) {
            LOG.warn("Raft group {}: stepping down failed: {}", groupId, e.toString());
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
