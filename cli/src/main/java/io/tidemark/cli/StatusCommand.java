package io.tidemark.cli;

import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.BrokerStatus;
import io.tidemark.proto.v1.ClusterStatusResponse;
import io.tidemark.proto.v1.PartitionDescription;
import io.tidemark.proto.v1.TopicDescription;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code tidemark status}: the cluster's name ({@code cluster.name} of the broker asked), the brokers, up or down as
 * the broker asked sees them (brokers probe each other every second), and, per partition, the leader, the replicas
 * and each replica's lag in records behind the leader, asking every broker that is up for its own replicas' log end
 * offsets (2 s deadline).
 */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "The cluster's name; brokers up or down; per partition the leader, the replicas and each "
                + "replica's lag.")
final class StatusCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;
    @Mixin
    ClientOptions client;
    @Option(names = "--output", defaultValue = "text", description = "text or json.")
    OutputFormat output;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        ClusterStatusResponse status;
        List<TopicDescription> topics;
        try (TidemarkAdmin admin = client.admin()) {
            status = admin.clusterStatus();
            topics = admin.describeTopics(admin.listTopics(true).stream().map(t -> t.getName()).toList());
        }
        printName(out, status.getClusterName());
        List<BrokerStatus> brokers = status.getBrokersList().stream()
                .sorted(Comparator.comparingInt(BrokerStatus::getNodeId)).toList();
        Map<Integer, Boolean> up = new HashMap<>();
        Map<Integer, Map<String, Long>> logEnds = new HashMap<>();
        for (BrokerStatus broker : brokers) {
            up.put(broker.getNodeId(), broker.getUp());
            if (broker.getUp()) {
                logEnds.put(broker.getNodeId(), replicaLogEnds(broker, topics));
            }
            printBroker(out, broker);
        }
        for (TopicDescription topic : topics) {
            for (PartitionDescription p : topic.getPartitionsList()) {
                printPartition(out, topic.getName(), p, up, logEnds);
            }
        }
        return 0;
    }

    /** The log end offsets of the broker's replicas, keyed "topic/partition"; null when it does not answer. */
    private Map<String, Long> replicaLogEnds(BrokerStatus broker, List<TopicDescription> topics) {
        try (TidemarkAdmin admin = new TidemarkAdmin(client.adminConfig(broker.getAddress()).requestTimeoutMs(2000)
                .build())) {
            Map<String, Long> ends = new HashMap<>();
            for (TopicDescription topic : admin.describeTopics(topics.stream().map(TopicDescription::getName).toList())) {
                for (PartitionDescription p : topic.getPartitionsList()) {
                    if (p.getReplicaNodeIdsList().contains(broker.getNodeId())) {
                        ends.put(topic.getName() + "/" + p.getPartition(), p.getLogEndOffset());
                    }
                }
            }
            return ends;
        } catch (TidemarkException e) {
            return null;
        }
    }

    /** The cluster's name: "cluster NAME", or says it has none; in JSON, null for none. */
    private void printName(PrintWriter out, String name) {
        if (output == OutputFormat.json) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("cluster", name.isEmpty() ? null : name);
            JsonLines.print(out, row);
        } else {
            out.println(name.isEmpty() ? "cluster without a name (cluster.name is not set)" : "cluster " + name);
        }
    }

    private void printBroker(PrintWriter out, BrokerStatus broker) {
        if (output == OutputFormat.json) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("node", broker.getNodeId());
            row.put("address", broker.getAddress());
            row.put("up", broker.getUp());
            JsonLines.print(out, row);
        } else {
            out.printf("node %d  %-21s  %s%n", broker.getNodeId(), broker.getAddress(), broker.getUp() ? "up" : "down");
        }
    }

    /** A replica's lag: "down" when its broker is down, "unknown" when its or the leader's log end is not known. */
    private void printPartition(PrintWriter out, String topic, PartitionDescription p, Map<Integer, Boolean> up,
                                Map<Integer, Map<String, Long>> logEnds) {
        String key = topic + "/" + p.getPartition();
        Map<String, Long> leaderEnds = logEnds.get(p.getLeaderNodeId());
        long leaderEnd = leaderEnds == null ? -1 : leaderEnds.getOrDefault(key, -1L);
        Map<String, Object> lag = new LinkedHashMap<>();
        for (int replica : p.getReplicaNodeIdsList()) {
            Map<String, Long> ends = logEnds.get(replica);
            lag.put(Integer.toString(replica), !up.getOrDefault(replica, false) ? "down"
                    : ends == null || leaderEnd < 0 ? "unknown" : Math.max(0, leaderEnd - ends.getOrDefault(key, 0L)));
        }
        if (output == OutputFormat.json) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("topic", topic);
            row.put("partition", p.getPartition());
            row.put("leader", p.getLeaderNodeId());
            row.put("replicas", p.getReplicaNodeIdsList());
            row.put("logEndOffset", leaderEnd);
            row.put("replicaLag", lag);
            JsonLines.print(out, row);
        } else {
            out.printf("%s-%d  leader %d  replicas %s  log end %d  lag %s%n", topic, p.getPartition(),
                    p.getLeaderNodeId(), p.getReplicaNodeIdsList(), leaderEnd, lag);
        }
    }
}
