package io.tidemark.it;

import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.OffsetAndMetadata;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.RebalanceListener;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkConsumer;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.GroupMemberDescription;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Consumers that subscribe share a topic's partitions through the group's coordinator: on a broker alone (a cluster
 * of one, in this JVM), a second member takes half of the partitions only after the first gave them up and committed
 * where it was, and when the first leaves the second takes them all; on three brokers, the group carries on through a
 * coordinator failover. Every record is read exactly once. Heartbeats every 200 ms to keep the test short.
 */
class ConsumerGroupIT {
    private static final int PARTITIONS = 6;

    @TempDir
    Path dir;
    private InJvmCluster cluster;

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void membersSplitTheTopicAndHandPartitionsOverWithoutLosingOrRepeatingARecord() throws Exception {
        cluster = InJvmCluster.start(dir, 1, Map.of("group.consumer.heartbeat.interval.ms", "200",
                "group.consumer.session.timeout.ms", "10000"));
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(cluster.bootstrap()).build())) {
            admin.createTopic("orders", PARTITIONS, 1, Map.of());
        }
        produce(0, 100);
        Map<String, Integer> reads = new HashMap<>();
        List<String> events = new ArrayList<>();
        try (TidemarkConsumer a = consumer("a"); TidemarkConsumer b = consumer("b")) {
            a.subscribe(List.of("orders"), committing(a, "a", events));
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                read(a, reads);
                return a.assignment().size() == PARTITIONS;
            });

            b.subscribe(List.of("orders"), committing(b, "b", events));
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                read(a, reads);
                read(b, reads);
                Set<TopicPartition> both = new HashSet<>(a.assignment());
                both.retainAll(b.assignment());
                assertEquals(Set.of(), both, "no partition is read by both members at once");
                return a.assignment().size() == 3 && b.assignment().size() == 3;
            });
            assertTrue(events.contains("a revoked 3"), events.toString());
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                read(a, reads);
                read(b, reads);
                return reads.size() == PARTITIONS * 100;
            });

            a.unsubscribe();
            assertEquals(2, events.stream().filter("a revoked 3"::equals).count(), events.toString());
            produce(100, 10);
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                read(b, reads);
                return b.assignment().size() == PARTITIONS && reads.size() == PARTITIONS * 110;
            });
        }
        assertEquals(PARTITIONS * 110, reads.size());
        assertEquals(List.of(), reads.entrySet().stream().filter(e -> e.getValue() != 1).map(Map.Entry::getKey)
                .toList(), "every record read exactly once");
    }

    /**
     * On three brokers, the coordinator (the leader of {@code __group_offsets}) stops while two members share the
     * topic: the broker that coordinates next loads the group as it was stored, so both carry on with the same member
     * ids and partitions, none is fenced (no partition lost), and every record is still read exactly once. Then, with
     * the stopped broker back, a third member joins and the coordinator stops in the middle of that rebalance (the
     * other two, not polling, have not given partitions up yet): the next coordinator finishes it, two partitions
     * each, no partition owned twice at any poll, no member fenced, every record read exactly once.
     */
    @Test
    void membersCarryOnThroughACoordinatorFailoverWithoutARebalance() throws Exception {
        cluster = InJvmCluster.start(dir, 3, Map.of("group.consumer.heartbeat.interval.ms", "200",
                "group.consumer.session.timeout.ms", "10000"));
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(cluster.bootstrap()).build())) {
            admin.createTopic("orders", PARTITIONS, 3, Map.of());
            produce(0, 50);
            Map<String, Integer> reads = new HashMap<>();
            List<String> events = new ArrayList<>();
            try (TidemarkConsumer a = consumer("a"); TidemarkConsumer b = consumer("b")) {
                a.subscribe(List.of("orders"), committing(a, "a", events));
                b.subscribe(List.of("orders"), committing(b, "b", events));
                await().atMost(Duration.ofSeconds(60)).until(() -> {
                    read(a, reads);
                    read(b, reads);
                    return a.assignment().size() == 3 && b.assignment().size() == 3 && reads.size() == PARTITIONS * 50;
                });
                Set<String> members = memberIds(admin);
                Set<TopicPartition> aOwns = Set.copyOf(a.assignment());
                int coordinator = admin.describeTopics(List.of("__group_offsets")).get(0).getPartitions(0)
                        .getLeaderNodeId();
                events.clear();

                cluster.stop(coordinator);
                produce(50, 10);
                await().atMost(Duration.ofSeconds(60)).ignoreException(TidemarkException.class).until(() -> {
                    read(a, reads);
                    read(b, reads);
                    return reads.size() == PARTITIONS * 60 && memberIds(admin).equals(members);
                });
                assertEquals(List.of(), events, "no partition revoked, lost or assigned anew");
                assertEquals(aOwns, a.assignment());

                cluster.start(coordinator);
                await().atMost(Duration.ofSeconds(60)).ignoreException(TidemarkException.class).until(() -> {
                    read(a, reads);
                    read(b, reads);
                    return admin.clusterStatus().getBrokersList().stream().allMatch(broker -> broker.getUp());
                });
                try (TidemarkConsumer c = consumer("c")) {
                    c.subscribe(List.of("orders"), committing(c, "c", events));
                    await().atMost(Duration.ofSeconds(60)).ignoreException(TidemarkException.class).until(() -> {
                        read(c, reads);
                        return memberIds(admin).size() == 3;
                    });
                    assertEquals("reconciling", admin.describeGroup("g").getState(), "a and b, not polling, have "
                            + "not given up c's partitions yet");
                    cluster.stop(admin.describeTopics(List.of("__group_offsets")).get(0).getPartitions(0)
                            .getLeaderNodeId());
                    produce(60, 10);
                    List<TidemarkConsumer> all = List.of(a, b, c);
                    await().atMost(Duration.ofSeconds(60)).ignoreException(TidemarkException.class).until(() -> {
                        for (TidemarkConsumer consumer : all) {
                            read(consumer, reads);
                        }
                        List<TopicPartition> owned = all.stream().flatMap(m -> m.assignment().stream()).toList();
                        assertEquals(owned.size(), Set.copyOf(owned).size(), "no partition owned twice: " + owned);
                        return reads.size() == PARTITIONS * 70 && all.stream().allMatch(m -> m.assignment().size() == 2);
                    });
                    assertEquals(List.of(), events.stream().filter(e -> e.contains("lost")).toList(),
                            "the rebalance the coordinator's failover interrupted went on: no member fenced");
                }
            }
            assertEquals(List.of(), reads.entrySet().stream().filter(e -> e.getValue() != 1)
                    .map(Map.Entry::getKey).toList(), "every record read exactly once");
        }
    }

    /**
     * The group layer on the replicated {@code __group_offsets} partition, not a test double: offsets deleted through
     * one coordinator stay deleted through the next two (each broker's store had read the commits as a follower), and
     * the group's other offsets, committed before and after the deletion, stay. (Compaction dropping the deletions'
     * tombstones is GroupCoordinatorTest's: the internal topic's 100 MiB segments and day of tombstone retention are
     * not settings.)
     */
    @Test
    void offsetsDeletedThroughOneCoordinatorStayDeletedThroughTheNextTwo() throws Exception {
        cluster = InJvmCluster.start(dir, 3, Map.of());
        TopicPartition offsets = new TopicPartition("__group_offsets", 0);
        TopicPartition orders0 = new TopicPartition("orders", 0);
        TopicPartition orders1 = new TopicPartition("orders", 1);
        TopicPartition refunds = new TopicPartition("refunds", 0);
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(cluster.bootstrap()).build())) {
            admin.createTopic("orders", 2, 3, Map.of());
            admin.createTopic("refunds", 1, 3, Map.of());
            for (int commit = 1; commit <= 20; commit++) {
                commit(admin, Map.of(orders0, new OffsetAndMetadata(commit, ""),
                        orders1, new OffsetAndMetadata(commit + 1, ""), refunds, new OffsetAndMetadata(commit + 2, "")));
            }
            assertEquals(Set.of(orders0, orders1), Set.copyOf(admin.deleteOffsets("g", List.of("orders"))));
            for (int commit = 21; commit <= 40; commit++) {
                commit(admin, Map.of(refunds, new OffsetAndMetadata(commit + 2, "")));
            }
            Map<TopicPartition, OffsetAndMetadata> left = Map.of(refunds, new OffsetAndMetadata(42, ""));
            for (int move = 0; move < 2; move++) {
                int coordinator = admin.describeTopics(List.of(offsets.topic())).get(0).getPartitions(0)
                        .getLeaderNodeId();
                cluster.stop(coordinator);
                await("the next coordinator answers").atMost(Duration.ofSeconds(60))
                        .ignoreException(TidemarkException.class)
                        .until(() -> admin.fetchOffsets("g", List.of()).equals(left));
                cluster.start(coordinator);
                await().atMost(Duration.ofSeconds(60)).ignoreException(TidemarkException.class)
                        .until(() -> admin.clusterStatus().getBrokersList().stream().allMatch(b -> b.getUp()));
            }
            assertEquals(left, admin.fetchOffsets("g", List.of(orders0, orders1, refunds)));
        }
    }

    private static void commit(TidemarkAdmin admin, Map<TopicPartition, OffsetAndMetadata> offsets) {
        await().atMost(Duration.ofSeconds(30)).ignoreException(TidemarkException.class).until(() -> {
            admin.commitOffsets("g", offsets);
            return true;
        });
    }

    private static Set<String> memberIds(TidemarkAdmin admin) {
        return admin.describeGroup("g").getMembersList().stream().map(GroupMemberDescription::getMemberId)
                .collect(Collectors.toSet());
    }

    /** A listener that commits the positions of the partitions it gives up, and notes what happened. */
    private static RebalanceListener committing(TidemarkConsumer consumer, String name, List<String> events) {
        return new RebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                Map<TopicPartition, OffsetAndMetadata> positions = new HashMap<>();
                partitions.forEach(tp -> positions.put(tp, new OffsetAndMetadata(consumer.position(tp))));
                consumer.commitSync(positions);
                events.add(name + " revoked " + partitions.size());
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                events.add(name + " assigned " + partitions.size());
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> partitions) {
                events.add(name + " lost " + partitions.size());
            }
        };
    }

    private TidemarkConsumer consumer(String clientId) {
        return new TidemarkConsumer(ConsumerConfig.builder(cluster.bootstrap()).group("g").clientId(clientId)
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).fetchMaxWaitMs(50).build());
    }

    private static void read(TidemarkConsumer consumer, Map<String, Integer> reads) {
        for (ConsumerRecord record : consumer.poll(Duration.ofMillis(50))) {
            reads.merge(record.partition() + "@" + record.offset(), 1, Integer::sum);
        }
    }

    private void produce(int from, int perPartition) throws Exception {
        try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(cluster.bootstrap()).build())) {
            for (int p = 0; p < PARTITIONS; p++) {
                for (int i = from; i < from + perPartition; i++) {
                    producer.send(new ProducerRecord("orders", p, null,
                            ("p" + p + " #" + i).getBytes(StandardCharsets.UTF_8)));
                }
            }
            producer.flush();
        }
    }
}
