package io.tidemark.cli;

import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.BrokerInfo;
import io.tidemark.proto.v1.PartitionDescription;
import io.tidemark.proto.v1.TopicDescription;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code tidemark status}: the brokers (up when they answer within 2 s) and, per partition, the leader, the
 * replicas and each replica's lag in records behind the leader, asking every broker for its own replicas' log
 * end offsets.
 */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "Brokers up or down; per partition the leader, the replicas and each replica's lag.")
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
        List<BrokerInfo> brokers;
        List<TopicDescription> topics;
        try (TidemarkAdmin admin = client.admin()) {
            brokers = admin.metadata(List.of()).getBrokersList().stream()
                    .sorted(java.util.Comparator.comparingInt(BrokerInfo::getNodeId)).toList();
            topics = admin.describeTopics(admin.listTopics(true).stream().map(t -> t.getName()).toList());
        }
        Map<Integer, Map<String, Long>> logEnds = new HashMap<>();
        for (BrokerInfo broker : brokers) {
            logEnds.put(broker.getNodeId(), replicaLogEnds(broker, topics));
            printBroker(out, broker, logEnds.get(broker.getNodeId()) != null);
        }
        for (TopicDescription topic : topics) {
            for (PartitionDescription p : topic.getPartitionsList()) {
                printPartition(out, topic.getName(), p, logEnds);
            }
        }
        return 0;
    }

    /** The log end offset of every replica the broker holds, keyed "topic/partition"; null when it is down. */
    private static Map<String, Long> replicaLogEnds(BrokerInfo broker, List<TopicDescription> topics) {
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(broker.getAddress()).requestTimeoutMs(2000)
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

    private void printBroker(PrintWriter out, BrokerInfo broker, boolean up) {
        if (output == OutputFormat.json) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("node", broker.getNodeId());
            row.put("address", broker.getAddress());
            row.put("up", up);
            JsonLines.print(out, row);
        } else {
            out.printf("node %d  %-21s  %s%n", broker.getNodeId(), broker.getAddress(), up ? "up" : "down");
        }
    }

    private void printPartition(PrintWriter out, String topic, PartitionDescription p,
                                Map<Integer, Map<String, Long>> logEnds) {
        String key = topic + "/" + p.getPartition();
        long leaderEnd = logEnds.getOrDefault(p.getLeaderNodeId(), Map.of()) == null ? -1
                : logEnds.getOrDefault(p.getLeaderNodeId(), Map.of()).getOrDefault(key, -1L);
        Map<String, Object> lag = new LinkedHashMap<>();
        for (int replica : p.getReplicaNodeIdsList()) {
            Map<String, Long> ends = logEnds.get(replica);
            lag.put(Integer.toString(replica), ends == null ? "down"
                    : leaderEnd < 0 ? "unknown" : Math.max(0, leaderEnd - ends.getOrDefault(key, 0L)));
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
