package io.tidemark.cli;

import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.BrokerStatus;
import io.tidemark.proto.v1.PartitionDescription;
import io.tidemark.proto.v1.TopicDescription;
import io.tidemark.proto.v1.TopicSummary;
import io.tidemark.replication.snapshot.GrpcSnapshotSource;
import io.tidemark.replication.verify.PartitionVerdict;
import io.tidemark.replication.verify.PartitionVerdict.Outcome;
import io.tidemark.replication.verify.ReplicaVerifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Clock;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;

/** {@code tidemark replicas}: what a partition's replicas hold. */
@Command(name = "replicas", mixinStandardHelpOptions = true, subcommands = ReplicasCommand.Verify.class,
        description = "Check what the replicas of partitions hold.")
final class ReplicasCommand {
    /** Exit code of {@code verify} when a partition's replicas differ. */
    static final int DIFFER = 4;
    /** Exit code of {@code verify} when a replica could not be read (and none differed). */
    static final int NOT_CHECKED = 3;
    /** Exit code of {@code verify} when a replica stayed behind the others (and none differed). */
    static final int BEHIND = 5;

    /**
     * {@code tidemark replicas verify}: for each partition, every replica's records from the latest of their log starts
     * to the earliest of their log ends (all committed) compared by offset, ReceiveTime, SendTime, key, value and
     * headers ({@link ReplicaVerifier}: a digest per range of offsets on each broker, then the first differing offset
     * where two differ), once replicas behind caught up with the furthest, or the catch-up wait ran out. A line per
     * partition as it is checked, then one for all.
     */
    @Command(name = "verify", mixinStandardHelpOptions = true,
            description = {"Compare every replica's records of each partition (offset, ReceiveTime, SendTime, key, "
                    + "value, headers) up to the earliest log end of its replicas: a digest per range of offsets, "
                    + "then the first offset at which two replicas differ. Where a replica compacted, records it "
                    + "lacks must be ones compaction removes (superseded by a later record of their key, or "
                    + "tombstones); every record both hold must be the same. A replica whose log ends before "
                    + "another's is waited for, up to --catch-up-ms, until it holds what the other held.",
                    "Exit code: 0 when every partition's replicas agree, 4 when a partition's replicas differ, 5 when "
                            + "a replica stayed behind (none differed), 3 when a replica could not be read (none "
                            + "differed or stayed behind), 1 on an error, 2 on a usage error."})
    static final class Verify implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--topic", description = "Only this topic (default: every topic, internal ones too).")
        String topic;
        @Option(names = "--partition", description = "Only this partition of --topic.")
        Integer partition;
        @Option(names = "--range-offsets", defaultValue = "10000",
                description = "Offsets per digest (default: ${DEFAULT-VALUE}); a range whose digests differ is read "
                        + "record by record.")
        long rangeOffsets;
        @Option(names = "--catch-up-ms", defaultValue = "30000",
                description = "How long a replica behind another is waited for (default: ${DEFAULT-VALUE}); one "
                        + "still behind then is reported BEHIND.")
        long catchUpMs;
        @Option(names = "--output", defaultValue = "text", description = "text or json.")
        OutputFormat output;

        @Override
        public Integer call() throws InterruptedException {
            if (partition != null && topic == null) {
                throw new ParameterException(spec.commandLine(), "--partition needs --topic");
            }
            if (rangeOffsets < 1) {
                throw new ParameterException(spec.commandLine(), "--range-offsets must be at least 1, not "
                        + rangeOffsets);
            }
            if (catchUpMs < 0) {
                throw new ParameterException(spec.commandLine(), "--catch-up-ms must be 0 or more, not "
                        + catchUpMs);
            }
            PrintWriter out = spec.commandLine().getOut();
            Map<Integer, String> addresses = new HashMap<>();
            List<PartitionVerdict.Target> targets = new ArrayList<>();
            try (TidemarkAdmin admin = client.admin()) {
                for (BrokerStatus broker : admin.clusterStatus().getBrokersList()) {
                    addresses.put(broker.getNodeId(), broker.getAddress());
                }
                List<String> names = topic != null ? List.of(topic)
                        : admin.listTopics(true).stream().map(TopicSummary::getName).toList();
                for (TopicDescription described : admin.describeTopics(names)) {
                    for (PartitionDescription p : described.getPartitionsList()) {
                        if (partition == null || p.getPartition() == partition) {
                            targets.add(target(described, p));
                        }
                    }
                }
            }
            if (partition != null && targets.isEmpty()) {
                throw new ParameterException(spec.commandLine(), "topic " + topic + " has no partition " + partition);
            }
            Map<Outcome, Integer> counts = new EnumMap<>(Outcome.class);
            try (GrpcSnapshotSource replicas = new GrpcSnapshotSource(addresses::get, 64 << 20, client.tls())) {
                ReplicaVerifier verifier = new ReplicaVerifier(replicas, rangeOffsets, catchUpMs, Clock.systemUTC(),
                        Thread::sleep);
                for (PartitionVerdict.Target target : targets) {
                    PartitionVerdict verdict = verifier.verify(target);
                    counts.merge(verdict.outcome(), 1, Integer::sum);
                    print(out, verdict);
                    out.flush();
                }
            }
            printSummary(out, targets.size(), counts);
            return counts.containsKey(Outcome.DIFFER) ? DIFFER : counts.containsKey(Outcome.BEHIND) ? BEHIND
                    : counts.containsKey(Outcome.NOT_CHECKED) ? NOT_CHECKED : 0;
        }

        /** A partition to verify, its leader (when it has one) as the reference its other replicas are compared with. */
        private static PartitionVerdict.Target target(TopicDescription topic, PartitionDescription p) {
            List<Integer> replicas = new ArrayList<>(p.getReplicaNodeIdsList());
            if (replicas.remove(Integer.valueOf(p.getLeaderNodeId()))) {
                replicas.add(0, p.getLeaderNodeId());
            }
            return new PartitionVerdict.Target(topic.getName(), TopicIds.fromBytes(topic.getTopicId()),
                    p.getPartition(), UUID.fromString(p.getGroupId()), replicas);
        }

        private void print(PrintWriter out, PartitionVerdict verdict) {
            if (output == OutputFormat.json) {
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("topic", verdict.target().topic());
                row.put("partition", verdict.target().partition());
                row.put("replicas", verdict.target().replicas());
                row.put("outcome", verdict.outcome().name().toLowerCase());
                row.put("fromOffset", verdict.fromOffset());
                row.put("toOffset", verdict.toOffset());
                row.put("records", verdict.records());
                row.put("digest", verdict.digest());
                row.put("compactedAway", verdict.compactedAway());
                verdict.difference().ifPresent(d -> {
                    row.put("differsAt", d.offset());
                    row.put("difference", d.what());
                });
                row.put(verdict.outcome() == Outcome.BEHIND ? "behind" : "unread", verdict.unread());
                JsonLines.print(out, row);
                return;
            }
            String replicas = verdict.target().replicas().toString().replace(" ", "");
            String head = verdict.target() + "  replicas " + replicas;
            switch (verdict.outcome()) {
                case AGREE -> out.printf("%s  [%d, %d)  %d records  agree  digest %s%n", head, verdict.fromOffset(),
                        verdict.toOffset(), verdict.records(), verdict.digest().isEmpty() ? "-" : verdict.digest());
                case AGREE_COMPACTED -> out.printf("%s  [%d, %d)  %d records  agree where compaction allows: %d "
                                + "records compacted away on some replicas%n", head, verdict.fromOffset(),
                        verdict.toOffset(), verdict.records(), verdict.compactedAway());
                case DIFFER -> {
                    PartitionVerdict.Difference d = verdict.difference().orElseThrow();
                    out.printf("%s  [%d, %d)  DIFFER at offset %d, node %d against node %d: %s%n", head,
                            verdict.fromOffset(), verdict.toOffset(), d.offset(), d.nodeId(), d.referenceNodeId(),
                            d.what());
                }
                case BEHIND -> out.printf("%s  [%d, %d)  %d records agree, but BEHIND: %s%n", head,
                        verdict.fromOffset(), verdict.toOffset(), verdict.records(),
                        String.join("; ", verdict.unread()));
                case NOT_CHECKED -> out.printf("%s  not checked: %s%n", head, String.join("; ", verdict.unread()));
            }
        }

        private void printSummary(PrintWriter out, int partitions, Map<Outcome, Integer> counts) {
            int agree = counts.getOrDefault(Outcome.AGREE, 0) + counts.getOrDefault(Outcome.AGREE_COMPACTED, 0);
            int differ = counts.getOrDefault(Outcome.DIFFER, 0);
            int behind = counts.getOrDefault(Outcome.BEHIND, 0);
            int unchecked = counts.getOrDefault(Outcome.NOT_CHECKED, 0);
            if (output == OutputFormat.json) {
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("partitions", partitions);
                row.put("agree", agree);
                row.put("differ", differ);
                row.put("behind", behind);
                row.put("notChecked", unchecked);
                JsonLines.print(out, row);
            } else {
                out.printf("%d partitions: %d agree, %d differ, %d behind, %d not checked%n", partitions, agree,
                        differ, behind, unchecked);
            }
        }
    }
}
