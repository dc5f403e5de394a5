package io.tidemark.cli;

import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.PartitionDescription;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
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
 */
@Command(name = "failover", mixinStandardHelpOptions = true,
        description = "Kill the leader of a partition of a local cluster N times; measure kill -> first acknowledged produce.")
final class FailoverPerfCommand implements Callable<Integer> {
    private static final String TOPIC = "failover-perf";
    /** Longest wait for leadership to return to the preferred replica: a few balance intervals (5 s default). */
    private static final long BALANCE_WAIT_MS = 15_000;

    @Spec
    CommandSpec spec;
    @Mixin
    LocalCommand.Which which = new LocalCommand.Which();
    @Option(names = "--kills", defaultValue = "20", description = "How many leaders to kill (default: ${DEFAULT-VALUE}).")
    int kills;

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
                    .lingerMs(0).requestTimeoutMs(1000).retryBackoffMs(20).deliveryTimeoutMs(60_000).build())) {
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
    private static void awaitHealthy(LocalCluster cluster, TidemarkAdmin admin, TidemarkProducer producer,
                                     PrintWriter out) throws InterruptedException {
        produceOne(producer);
        long start = System.nanoTime();
        while (!replicasInSync(cluster, admin)) {
            TimeUnit.MILLISECONDS.sleep(100);
            if (TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start) > 60) {
                throw new IllegalStateException("the replicas of " + TOPIC + " did not catch up within 60 s");
            }
        }
        long balanceStart = System.nanoTime();
        while (!ledByPreferred(admin)) {
            TimeUnit.MILLISECONDS.sleep(100);
            if (TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - balanceStart) > BALANCE_WAIT_MS) {
                out.println("(leadership did not return to the preferred replica; going on)");
                return;
            }
        }
    }

    private static boolean replicasInSync(LocalCluster cluster, TidemarkAdmin admin) {
        PartitionDescription partition = admin.describeTopics(List.of(TOPIC)).get(0).getPartitions(0);
        for (int replica : partition.getReplicaNodeIdsList()) {
            try (TidemarkAdmin direct = new TidemarkAdmin(AdminConfig.builder(cluster.clientAddress(replica))
                    .requestTimeoutMs(1000).build())) {
                if (direct.describeTopics(List.of(TOPIC)).get(0).getPartitions(0).getLogEndOffset()
                        != partition.getLogEndOffset()) {
                    return false;
                }
            } catch (TidemarkException e) {
                return false;
            }
        }
        return true;
    }

    private static boolean ledByPreferred(TidemarkAdmin admin) {
        PartitionDescription partition = admin.describeTopics(List.of(TOPIC)).get(0).getPartitions(0);
        return partition.getLeaderNodeId() == partition.getReplicaNodeIds(0);
    }

    /** The partition's leader, once one is elected (at most 60 s). */
    private static int awaitLeader(TidemarkAdmin admin) throws InterruptedException {
        for (int attempt = 0; attempt < 600; attempt++) {
            int leader = admin.describeTopics(List.of(TOPIC)).get(0).getPartitions(0).getLeaderNodeId();
            if (leader > 0) {
                return leader;
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
        throw new IllegalStateException(TOPIC + " has had no leader for 60 s");
    }

    /** Sends one record and waits for its acknowledgement; the producer retries through the leader change. */
    private static void produceOne(TidemarkProducer producer) {
        try {
            producer.send(new ProducerRecord(TOPIC, 0, null, new byte[100])).join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof TidemarkException t ? t : e;
        }
    }

    private void restart() throws Exception {
        LocalCommand.Up up = new LocalCommand.Up();
        up.spec = spec;
        up.which = which;
        up.call();
    }
}
