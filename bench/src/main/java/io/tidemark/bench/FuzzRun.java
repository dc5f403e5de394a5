package io.tidemark.bench;

import io.tidemark.client.api.TrackedCommitFormatFuzzTarget;
import io.tidemark.core.group.GroupStateFormatFuzzTarget;
import io.tidemark.core.group.OffsetCommitFormatFuzzTarget;
import io.tidemark.core.log.PartitionLogFuzzTarget;
import io.tidemark.core.topic.InternalTopicWritesFuzzTarget;
import io.tidemark.core.txn.TransactionStateFormatFuzzTarget;
import io.tidemark.proto.fuzz.FuzzCampaign;
import io.tidemark.proto.fuzz.FuzzTarget;
import io.tidemark.proto.fuzz.RequestMessagesFuzzTarget;
import io.tidemark.proto.mirror.MirrorStateFuzzTarget;
import io.tidemark.proto.record.ProvenanceFuzzTarget;
import io.tidemark.proto.record.RecordBatchReaderFuzzTarget;
import io.tidemark.proto.record.RecordBatchValidatorFuzzTarget;
import io.tidemark.proto.record.TransactionMarkerFuzzTarget;
import io.tidemark.replication.statemachine.GroupEntryFormatFuzzTarget;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The long fuzzing campaign: every fuzz target of the modules' tests ({@link FuzzCampaign}) on its share of
 * {@code --inputs} inputs made from {@code --seed}, one target after the other on one thread. Prints progress every
 * 100,000 inputs, then each target's inputs, time and outcomes (accepted, refused per documented error), and the report
 * of each finding (seed, input index, bytes); exits 1 when there was any.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar io.tidemark.bench.FuzzRun [--inputs 1000000] [--seed 1] [--targets a,b]
 * </pre>
 * The partition log's target writes a log in the temporary directory ({@code -Djava.io.tmpdir=/dev/shm} keeps it in
 * memory) and deletes it at the end.
 */
public final class FuzzRun {
    private static final long PROGRESS_EVERY = 100_000;
    /** Inputs run between looks at the progress. */
    private static final long CHUNK = 10_000;

    /** A target and its share of the inputs, in parts of {@link #TOTAL_WEIGHT}. */
    private record Share(String name, int weight, Factory factory) {
    }

    private interface Factory {
        FuzzTarget create(long seed) throws Exception;
    }

    /**
     * The validator takes the largest share (it guards every produced batch); the partition log's append path and the
     * groups' requests come next; each internal format gets a few percent, protobuf's parsing the least.
     */
    private static final List<Share> SHARES = List.of(
            new Share("validator", 30, seed -> new RecordBatchValidatorFuzzTarget()),
            new Share("marker", 5, seed -> new TransactionMarkerFuzzTarget()),
            new Share("provenance", 6, seed -> new ProvenanceFuzzTarget()),
            new Share("reader", 5, seed -> new RecordBatchReaderFuzzTarget()),
            new Share("requests", 4, seed -> new RequestMessagesFuzzTarget()),
            new Share("mirror-state", 4, seed -> new MirrorStateFuzzTarget()),
            new Share("internal-topic-produce", 4, seed -> new InternalTopicWritesFuzzTarget()),
            new Share("offset-commit", 4, seed -> new OffsetCommitFormatFuzzTarget()),
            new Share("group-state", 4, seed -> new GroupStateFormatFuzzTarget()),
            new Share("transaction-state", 4, seed -> new TransactionStateFormatFuzzTarget()),
            new Share("partition-log", 12, PartitionLogFuzzTarget::new),
            new Share("group-entry", 10, seed -> new GroupEntryFormatFuzzTarget()),
            new Share("tracked-commit", 8, seed -> new TrackedCommitFormatFuzzTarget()));
    private static final int TOTAL_WEIGHT = SHARES.stream().mapToInt(Share::weight).sum();

    private FuzzRun() {
    }

    public static void main(String[] args) throws Exception {
        long inputs = 1_000_000;
        long seed = 1;
        Set<String> names = new TreeSet<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--inputs" -> inputs = Long.parseLong(args[++i].replace("_", "").replace(",", ""));
                case "--seed" -> seed = Long.parseLong(args[++i]);
                case "--targets" -> names.addAll(Arrays.asList(args[++i].split(",")));
                default -> {
                    System.err.println("usage: FuzzRun [--inputs N] [--seed S] [--targets name,...]; targets: "
                            + SHARES.stream().map(Share::name).toList());
                    System.exit(2);
                }
            }
        }
        List<Share> chosen = SHARES.stream().filter(s -> names.isEmpty() || names.contains(s.name())).toList();
        if (chosen.isEmpty()) {
            System.err.println("no target named " + names + "; targets: " + SHARES.stream().map(Share::name).toList());
            System.exit(2);
        }
        int weights = chosen.stream().mapToInt(Share::weight).sum();
        System.out.printf("fuzzing %,d inputs, seed %d, %d targets: %s%n", inputs, seed, chosen.size(),
                chosen.stream().map(Share::name).toList());
        long start = System.nanoTime();
        long done = 0;
        long nextProgress = PROGRESS_EVERY;
        List<FuzzCampaign> campaigns = new ArrayList<>();
        for (Share share : chosen) {
            long count = Math.max(1, inputs * share.weight() / weights);
            FuzzCampaign campaign;
            try (FuzzTarget target = share.factory().create(seed)) {
                campaign = new FuzzCampaign(target, seed);
                while (campaign.inputs() < count) {
                    campaign.run(Math.min(CHUNK, count - campaign.inputs()));
                    if (done + campaign.inputs() >= nextProgress) {
                        System.out.printf("[%7.1f s] %,d inputs, %s at %,d of %,d, %d findings%n",
                                (System.nanoTime() - start) / 1e9, done + campaign.inputs(), share.name(),
                                campaign.inputs(), count, findings(campaigns) + campaign.findingCount());
                        nextProgress += PROGRESS_EVERY;
                    }
                }
            }
            done += campaign.inputs();
            campaigns.add(campaign);
            System.out.println(campaign.summary());
        }
        report(campaigns, seed, done, (System.nanoTime() - start) / 1e9);
        System.exit(findings(campaigns) == 0 ? 0 : 1);
    }

    private static void report(List<FuzzCampaign> campaigns, long seed, long inputs, double seconds) {
        System.out.printf("%nsummary: %,d inputs in %.1f s (%,.0f inputs/s), seed %d%n", inputs, seconds,
                inputs / seconds, seed);
        for (FuzzCampaign campaign : campaigns) {
            System.out.println("  " + campaign.summary());
        }
        long findings = findings(campaigns);
        System.out.println(findings == 0 ? "no finding: every outcome was a documented one"
                : findings + " inputs had an unexpected outcome:");
        for (FuzzCampaign campaign : campaigns) {
            campaign.findings().forEach(finding -> System.out.println(finding.report()));
        }
    }

    private static long findings(List<FuzzCampaign> campaigns) {
        return campaigns.stream().mapToLong(FuzzCampaign::findingCount).sum();
    }
}
