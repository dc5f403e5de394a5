package io.tidemark.cli;

import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.Retry;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.PartitionDescription;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Clock;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * {@code tidemark perf failover}: unavailability after a leader crash on a local cluster. Repeatedly kills
 * (SIGKILL) the leader of a one-partition topic, then sends one record at a time until one is acknowledged:
 * the time from the kill to that acknowledgement is the partition's unavailability. The killed broker is
 * restarted, and every replica caught up, before the next round. Prints every round and the percentiles.
 *
 * <p>A broker dying cuts calls under it: every step of a round (finding the leader, the produce, the waits for the
 * replicas and the preferred leader) retries retriable failures ({@link Retry}) for up to
 * {@value #STEP_TIMEOUT_MS} ms, so they count as unavailability, and only a step still failing then, or a failure that
 * is not retriable, ends the run with its error.
 */
@Command(name = "failover", mixinStandardHelpOptions = true,
        description = "Kill the leader of a partition of a local cluster N times; measure kill -> first acknowledged produce.")
final class FailoverPerfCommand implements Callable<Integer> {
    private static final String TOPIC = "failover-perf";
    private static final TopicPartition PARTITION = new TopicPartition(TOPIC, 0);
    /**
     * Longest a step of a round may take: an election after a kill takes about a second (docs/benchmarks.md), a
     * restarted replica catching up a few; a minute means the cluster is not coming back.
     */
    private static final long STEP_TIMEOUT_MS = 60_000;
    /** Longest wait for leadership to return to the preferred replica: a few balance intervals (5 s default). */
    private static final long BALANCE_WAIT_MS = 15_000;
    /** Between a step's attempts: small against an election (0.3-0.6 s timeouts), so it adds little to a figure. */
    private static final long RETRY_BACKOFF_MS = 20;
    /** Between checks of the cluster's state while waiting for it. */
    private static final long POLL_MS = 100;

    @Spec
    CommandSpec spec;
    @Mixin
    LocalCommand.Which which = new LocalCommand.Which();
    @Option(names = "--kills", defaultValue = "20", description = "How many leaders to kill (default: ${DEFAULT-VALUE}).")
    int kills;
    /** Times the steps' deadlines. */
    InstantSource clock = Clock.systemUTC();

    @Override
    public Integer call() throws Exception {
        LocalCluster cluster = which.existing();
        PrintWriter out = spec.commandLine().getOut();
        Histogram unavailableMs = new Histogram(3);
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(cluster.bootstrap()).requestTimeoutMs(2000)
                .build())) {
            if (admin.listTopics(false).stream().noneMatch(t -> t.getName().equals(TOPIC))) {
                admin.createTopic(TOPIC, 1, Math.min(3, cluster.nodes()), Map.of());
            }
            try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(cluster.bootstrap())
                    .lingerMs(0).requestTimeoutMs(1000).retryBackoffMs(RETRY_BACKOFF_MS)
                    .deliveryTimeoutMs(STEP_TIMEOUT_MS).build())) {
                produceOne(producer);
                for (int round = 1; round <= kills; round++) {
                    int leader = awaitLeader(admin);
                    ProcessHandle process = cluster.process(leader).orElseThrow(() -> new IllegalStateException(
                            "the leader, node " + leader + ", does not run"));
                    long killedAt = System.nanoTime();
                    process.destroyForcibly();
                    produceOne(producer);
                    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
                    unavailableMs.recordValue(ms);
                    out.printf("round %d: killed node %d, first acknowledged produce after %d ms%n", round, leader, ms);
                    out.flush();
                    process.onExit().get();
                    restart();
                    awaitHealthy(cluster, admin, producer, out);
                }
            }
        }
        out.printf("%d kills: unavailability p50 %d ms, p99 %d ms, max %d ms%n", unavailableMs.getTotalCount(),
                unavailableMs.getValueAtPercentile(50), unavailableMs.getValueAtPercentile(99),
                unavailableMs.getMaxValue());
        return 0;
    }

    /**
     * Waits, before the next kill, until every replica holds the partition's log end (so the restarted broker is
     * back in the group and one more kill loses no quorum) and the leader is the preferred replica (the brokers
     * move leadership back after a restart; a move during the next round would add to its figure). A cluster
     * that does not balance leaders goes on after {@link #BALANCE_WAIT_MS}.
     */
    private void awaitHealthy(LocalCluster cluster, TidemarkAdmin admin, TidemarkProducer producer, PrintWriter out) {
        produceOne(producer);
        Retry.within(clock, STEP_TIMEOUT_MS, POLL_MS)
                .onDeadline((last, attempts) -> new TidemarkException(last.code(), "the replicas of " + TOPIC
                        + " did not catch up within " + STEP_TIMEOUT_MS + " ms: " + last.getMessage()))
                .run(() -> requireReplicasInSync(cluster, admin));
        try {
            Retry.within(clock, BALANCE_WAIT_MS, POLL_MS).run(() -> requireLedByPreferred(admin));
        } catch (TidemarkException e) {
            if (!e.retriable()) {
                throw e;
            }
            out.println("(leadership did not return to the preferred replica; going on: " + e.getMessage() + ")");
        }
    }

    /** Throws NOT_AVAILABLE naming a replica that does not hold the partition's log end yet. */
    private static void requireReplicasInSync(LocalCluster cluster, TidemarkAdmin admin) {
        PartitionDescription partition = describe(admin);
        for (int replica : partition.getReplicaNodeIdsList()) {
            long logEnd = replicaLogEnd(cluster, replica);
            if (logEnd != partition.getLogEndOffset()) {
                throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "node " + replica + " holds " + PARTITION
                        + " up to offset " + logEnd + ", the leader up to " + partition.getLogEndOffset());
            }
        }
    }

    /** The log end offset of the partition's replica on {@code node}, as that broker answers it. */
    private static long replicaLogEnd(LocalCluster cluster, int node) {
        try (TidemarkAdmin direct = new TidemarkAdmin(AdminConfig.builder(cluster.clientAddress(node))
                .requestTimeoutMs(1000).build())) {
            return describe(direct).getLogEndOffset();
        } catch (TidemarkException e) {
            if (e.code() != ErrorCode.UNKNOWN_TOPIC) {
                throw e;
            }
            // a broker just restarted answers before it replayed the metadata that created the topic
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "node " + node + " does not know " + TOPIC + " yet: "
                    + e.getMessage());
        }
    }

    /** Throws NOT_AVAILABLE while the partition's leader is not its preferred replica. */
    private static void requireLedByPreferred(TidemarkAdmin admin) {
        PartitionDescription partition = describe(admin);
        if (partition.getLeaderNodeId() != partition.getReplicaNodeIds(0)) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "node " + partition.getLeaderNodeId() + " leads "
                    + PARTITION + ", the preferred replica is node " + partition.getReplicaNodeIds(0));
        }
    }

    /** The partition's leader, once one is elected. */
    private int awaitLeader(TidemarkAdmin admin) {
        return Retry.within(clock, STEP_TIMEOUT_MS, POLL_MS)
                .onDeadline((last, attempts) -> new TidemarkException(last.code(), TOPIC + " has had no leader for "
                        + STEP_TIMEOUT_MS + " ms: " + last.getMessage()))
                .call(() -> {
                    int leader = describe(admin).getLeaderNodeId();
                    if (leader <= 0) {
                        throw new TidemarkException(ErrorCode.NOT_AVAILABLE, PARTITION + " has no leader");
                    }
                    return leader;
                });
    }

    private static PartitionDescription describe(TidemarkAdmin admin) {
        return admin.describeTopics(List.of(TOPIC)).get(0).getPartitions(0);
    }

    /**
     * Sends one record and waits for its acknowledgement: the producer retries through the leader change, and a
     * retriable failure it ends with is sent again, until {@link #STEP_TIMEOUT_MS}.
     */
    private void produceOne(TidemarkProducer producer) {
        Retry.within(clock, STEP_TIMEOUT_MS, RETRY_BACKOFF_MS).run(() -> {
            try {
                producer.send(new ProducerRecord(TOPIC, 0, null, new byte[100])).join();
            } catch (CompletionException e) {
                throw e.getCause() instanceof TidemarkException t ? t : e;
            }
        });
    }

    private void restart() throws Exception {
        LocalCommand.Up up = new LocalCommand.Up();
        up.spec = spec;
        up.which = which;
        up.call();
    }
}
