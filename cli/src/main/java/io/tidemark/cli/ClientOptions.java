package io.tidemark.cli;

import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;

import java.util.List;
import java.util.stream.IntStream;
import picocli.CommandLine.Option;

/** The options every client command shares: where the cluster is. */
final class ClientOptions {
    @Option(names = "--bootstrap", defaultValue = "127.0.0.1:9400",
            description = "Brokers to reach the cluster through, HOST:PORT[,HOST:PORT...] (default: ${DEFAULT-VALUE}).")
    String bootstrap;

    TidemarkAdmin admin() {
        return new TidemarkAdmin(AdminConfig.builder(bootstrap).build());
    }

    /** The one partition asked for, or every partition of the topic (UNKNOWN_TOPIC when there is no such topic). */
    List<TopicPartition> partitions(String topic, Integer partition) {
        if (partition != null) {
            return List.of(new TopicPartition(topic, partition));
        }
        try (TidemarkAdmin admin = admin()) {
            int count = admin.metadata(List.of(topic)).getTopics(0).getPartitionsCount();
            return IntStream.range(0, count).mapToObj(p -> new TopicPartition(topic, p)).toList();
        }
    }
}
