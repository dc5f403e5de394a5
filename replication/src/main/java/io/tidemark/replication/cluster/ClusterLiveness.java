package io.tidemark.replication.cluster;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import io.tidemark.core.partition.PartitionLeader;
import io.tidemark.core.server.ClusterView;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.tls.TlsMaterial;
import io.tidemark.proto.v1.BrokerStatus;
import io.tidemark.proto.v1.ClusterServiceGrpc;
import io.tidemark.proto.v1.LeaderTerm;
import io.tidemark.proto.v1.PeerAnswer;
import io.tidemark.proto.v1.ProbeRequest;
import io.tidemark.proto.v1.ProbeResponse;
import io.tidemark.replication.partition.KnownLeaders;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Whether each broker of the cluster is up, and who leads the partition groups of which this broker holds no replica:
 * every second this broker probes every other broker's client endpoint ({@code ClusterService.Probe}, 2 s
 * deadline). A broker that answered in the last 3 s is up; its answer also lists the groups it leads with their
 * Raft terms and how long ago its own probes last heard from each other broker ({@link ProbeResults}), so this
 * broker knows what each other broker reaches ({@link #reaches}). This broker itself is always up: it is the one
 * answering.
 *
 * <p>Why probes rather than Raft state: the metadata group's leader hears from every broker at each heartbeat,
 * but a follower of that group knows only whether its leader is there, so it would have to ask the leader (one
 * more call, and no answer at all while the group elects); and a broker whose Raft port answers may not serve
 * clients yet (a restarting broker starts Raft before its client port). A probe of the client endpoint answers
 * what {@code tidemark status} asks, whether the broker can be reached where clients reach it, the same way from
 * every broker and within about 3 s (a broker killed or paused misses three probes). It costs each broker one
 * small call per other broker per second whatever the request rate: ClusterStatus and Metadata read the last
 * results and make no call of their own.
 *
 * <p>An answer also carries the member's {@code cluster.name}; one that differs from this broker's is logged as a
 * warning ({@link ClusterNameAgreement}), the member still counting as up. A member that refuses this broker's
 * connections (TLS on one side only, or another CA) is logged as an error ({@link ConnectionRefusals}).
 *
 * <p>Threading: probes start on one thread, {@code tidemark-liveness}; answers arrive on gRPC's threads and go
 * into the thread-safe {@link ProbeResults}.
 */
public final class ClusterLiveness implements ClusterView, KnownLeaders, LeaderBalancePolicy.Reachability,
        Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterLiveness.class);
    /** One probe per broker per second: a death shows within seconds, and the calls are few next to heartbeats. */
    private static final long PROBE_INTERVAL_MS = 1000;
    /** Longer than the interval, so a slow answer on a busy machine still counts. */
    private static final long PROBE_DEADLINE_MS = 2000;
    /** Down after three probes without an answer: one GC pause or busy second does not flip a broker down. */
    private static final long SILENCE_MS_MAX = 3 * PROBE_INTERVAL_MS;
    /**
     * A broker reaches another while it heard from it in the last 2.5 s: what another broker reaches passes two
     * probes (its own of the other, then this broker's of it), each at most an interval old, plus half a second for
     * the answers. Shorter than {@link #SILENCE_MS_MAX} on purpose: the leader balancer must see a broker cut off
     * from the others before it may hand that broker a group, which is one election plus one balance interval after
     * the cut at the earliest; with up/down's 3 s, and a second more until the cut-off broker's own answer shows it,
     * a 2 s interval made the cut-off old leader the leader again (NetworkPartitionIT).
     */
    static final long REACHED_MS_MAX = 2 * PROBE_INTERVAL_MS + PROBE_INTERVAL_MS / 2;

    private final int nodeId;
    private final ClusterMembers members;
    private final InstantSource clock;
    private final ClusterClock clusterClock;
    private final ProbeResults results = new ProbeResults(SILENCE_MS_MAX);
    private final ClusterNameAgreement names;
    private final Map<Integer, ManagedChannel> channels = new HashMap<>();
    private final ConnectionRefusals refusals;
    private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "tidemark-liveness");
        thread.setDaemon(true);
        return thread;
    });

    /**
     * @param clusterName this broker's cluster.name, "" for none
     * @param tls         this broker's TLS material, for its probes; empty for plain text
     * @param clusterClock told each other broker's clock from its answers
     */
    public ClusterLiveness(int nodeId, String clusterName, ClusterMembers members, InstantSource clock,
                           Optional<TlsMaterial> tls, ClusterClock clusterClock) {
        this.nodeId = nodeId;
        this.clusterClock = clusterClock;
        this.members = members;
        this.clock = clock;
        this.names = new ClusterNameAgreement(clusterName);
        this.refusals = new ConnectionRefusals(nodeId, members, clock, tls);
        for (ClusterMembers.Member member : members.all()) {
            if (member.nodeId() != nodeId) {
                channels.put(member.nodeId(), TlsMaterial.channelTo(member.clientAddress(), tls).build());
            }
        }
    }

    /** Starts probing, once a second from now. */
    public void start() {
        executor.scheduleWithFixedDelay(this::probeAll, 0, PROBE_INTERVAL_MS, TimeUnit.MILLISECONDS);
    }

    private void probeAll() {
        channels.forEach(this::probe);
    }

    /**
     * Probes one broker. A channel whose last connection failed reconnects at once rather than after gRPC's
     * growing backoff (up to 2 minutes), so a restarted broker shows up at the next probe.
     */
    private void probe(int member, ManagedChannel channel) {
        if (channel.getState(true) == ConnectivityState.TRANSIENT_FAILURE) {
            channel.resetConnectBackoff();
        }
        ClusterServiceGrpc.newStub(channel).withDeadlineAfter(PROBE_DEADLINE_MS, TimeUnit.MILLISECONDS)
                .probe(ProbeRequest.newBuilder().setFromNodeId(nodeId).build(), new StreamObserver<>() {
                    private final long sentNanos = clusterClock.nowNanos();

                    @Override
                    public void onNext(ProbeResponse response) {
                        answered(member, response);
                        if (response.getNodeId() == member && response.getClockMs() > 0) {
                            clusterClock.heard(member, response.getClockMs(), sentNanos, clusterClock.nowNanos());
                        }
                    }

                    @Override
                    public void onError(Throwable failure) {
                        LOG.debug("Probe of node {} failed: {}", member, failure.toString());
                        refusals.probeFailed(member, failure);
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
    }

    private void answered(int member, ProbeResponse response) {
        if (response.getNodeId() != member) {
            LOG.warn("Node {}'s address {} is answered by node {}; taking node {} as down", member,
                    members.member(member).clientAddress(), response.getNodeId(), member);
            return;
        }
        names.answered(member, response.getClusterName()).ifPresent(LOG::warn);
        Map<UUID, Long> leaderTerms = new HashMap<>();
        for (LeaderTerm lead : response.getLeadsList()) {
            leaderTerms.put(TopicIds.fromBytes(lead.getGroupId()), lead.getTerm());
        }
        Map<Integer, Long> peerAnsweredMsAgo = new HashMap<>();
        for (PeerAnswer peer : response.getPeerAnswersList()) {
            peerAnsweredMsAgo.put(peer.getNodeId(), peer.getAnsweredMsAgo());
        }
        results.answered(member, clock.millis(), leaderTerms, peerAnsweredMsAgo);
    }

    @Override
    public List<BrokerStatus> brokers() {
        long nowMs = clock.millis();
        return members.all().stream().map(m -> BrokerStatus.newBuilder().setNodeId(m.nodeId())
                .setAddress(m.clientAddress()).setUp(m.nodeId() == nodeId || results.up(m.nodeId(), nowMs))
                .build()).toList();
    }

    /** How long ago this broker's probes last heard from each other broker that ever answered them. */
    List<PeerAnswer> peerAnswers() {
        long nowMs = clock.millis();
        List<PeerAnswer> answers = new ArrayList<>();
        for (int member : channels.keySet()) {
            long ago = results.answeredMsAgo(member, nowMs);
            if (ago != Long.MAX_VALUE) {
                answers.add(PeerAnswer.newBuilder().setNodeId(member).setAnsweredMsAgo(ago).build());
            }
        }
        return answers;
    }

    /**
     * Whether {@code from}'s own probes heard from {@code to} within {@link #REACHED_MS_MAX}: this broker's, or
     * what {@code from} said in its last answer, aged by the time since.
     */
    @Override
    public boolean reaches(int from, int to) {
        long nowMs = clock.millis();
        if (from == to) {
            return true;
        }
        long ago = from == nodeId ? results.answeredMsAgo(to, nowMs) : results.answeredMsAgo(from, to, nowMs);
        return ago <= REACHED_MS_MAX;
    }

    @Override
    public PartitionLeader leaderOf(UUID groupId) {
        return results.leaderOf(groupId, clock.millis());
    }

    @Override
    public void close() {
        executor.shutdownNow();
        channels.values().forEach(ManagedChannel::shutdownNow);
        refusals.close();
    }
}
