package io.tidemark.proto.fuzz;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * Runs a {@link FuzzTarget} on inputs made from a seed, counts the outcomes and keeps the findings: the fuzzing of
 * Tidemark's decoders, the record batch validator and the partition log's append path (the fuzz tests of each module
 * run short campaigns of a fixed seed; the bench module's {@code FuzzRun} runs the long one).
 *
 * <h2>Why a seeded generator and not a coverage-guided fuzzer</h2>
 * Jazzer's JUnit integration ({@code com.code-intelligence:jazzer-junit} 0.24.0) resolves and runs offline with this
 * build's JUnit 6 (its platform aligned by the JUnit BOM), but plain {@code mvn test} only replays its stored corpus:
 * fuzzing needs {@code JAZZER_FUZZ=1} and runs one fuzz test per JVM, its runs are steered by coverage and so are not
 * made again from a seed, and its agent took 7 s to start and over 1 GB of memory for one trivial test (2026-12-05), a
 * third of the 20 s the fuzz tests may add to CI. A seeded generator needs no dependency, runs in any test, and makes
 * input {@code i} of seed {@code s} again on any machine ({@link #input}); it finds what its mutations reach, which for
 * formats of length fields, counts and varints behind one CRC is most of it, since a good share of the mutated inputs
 * get their CRC recomputed ({@link FuzzTarget#repair}).
 *
 * <h2>Inputs</h2>
 * Input {@code i} comes from its own random generator, seeded from the campaign's seed and {@code i}, so any input is
 * made again without the ones before it (for a stateless target; a stateful one, the partition log, needs the campaign
 * run again up to it):
 * <ul>
 *   <li>10%: a well-formed input ({@link FuzzTarget#valid});</li>
 *   <li>65%: a well-formed input mutated ({@link FuzzTarget#mutate}), then repaired ({@link FuzzTarget#repair});</li>
 *   <li>10%: two well-formed inputs, the second perhaps mutated, spliced or concatenated, then repaired;</li>
 *   <li>15%: random bytes, then repaired.</li>
 * </ul>
 *
 * <p>Not thread-safe: one campaign, one thread.
 */
public final class FuzzCampaign {
    /** Findings kept with their inputs; the others are only counted. */
    private static final int FINDINGS_KEPT = 10;
    /** Bytes of an input a report shows. */
    private static final int REPORTED_BYTES = 512;

    /** How an input was made. */
    public enum Kind { VALID, MUTATED, SPLICED, RANDOM }

    /**
     * One input of a campaign.
     *
     * @param how what it is and the mutations made, for a report
     */
    public record Input(long seed, long index, Kind kind, String how, byte[] bytes) {
    }

    /** An input whose outcome was not one the target documents, and what came of it. */
    public record Finding(String target, Input input, Throwable error) {
        /** The seed, the input's index, how it was made, what happened and the input's bytes in hex. */
        public String report() {
            StringWriter trace = new StringWriter();
            error.printStackTrace(new PrintWriter(trace));
            String[] lines = trace.toString().split("\n");
            StringBuilder report = new StringBuilder("fuzz target '").append(target).append("', seed ")
                    .append(input.seed()).append(", input ").append(input.index()).append(" (")
                    .append(input.kind()).append(": ").append(input.how()).append("), ")
                    .append(input.bytes().length).append(" bytes: ").append(error);
            for (int i = 1; i < Math.min(lines.length, 9); i++) {
                report.append('\n').append(lines[i]);
            }
            return report.append("\n  input: ").append(Hex.of(input.bytes(), REPORTED_BYTES))
                    .append("\n  made again by FuzzCampaign.input(target, ").append(input.seed()).append(", ")
                    .append(input.index()).append(")").toString();
        }
    }

    private final FuzzTarget target;
    private final long seed;
    private final Map<String, Long> outcomes = new TreeMap<>();
    private final List<Finding> findings = new ArrayList<>();
    private long inputs;
    private long findingCount;
    private long elapsedNanos;

    public FuzzCampaign(FuzzTarget target, long seed) {
        this.target = target;
        this.seed = seed;
    }

    /** Input {@code index} of the campaign of {@code seed} on {@code target}: the same bytes every time. */
    public static Input input(FuzzTarget target, long seed, long index) {
        SplittableRandom random = new SplittableRandom(mix(seed) ^ mix(index + 0x632BE59BD9B4E019L));
        StringBuilder how = new StringBuilder();
        int roll = random.nextInt(100);
        Kind kind;
        byte[] bytes;
        if (roll < 10) {
            kind = Kind.VALID;
            bytes = target.valid(random, how);
        } else if (roll < 75) {
            kind = Kind.MUTATED;
            bytes = target.repair(target.mutate(target.valid(random, how), random, how), random, how);
        } else if (roll < 85) {
            kind = Kind.SPLICED;
            byte[] first = target.valid(random, how);
            how.append(" + ");
            byte[] second = target.valid(random, how);
            if (random.nextBoolean()) {
                second = target.mutate(second, random, how);
            }
            bytes = target.repair(Mutator.splice(first, second, random, how), random, how);
        } else {
            kind = Kind.RANDOM;
            bytes = target.repair(Mutator.randomBytes(random, how), random, how);
        }
        return new Input(seed, index, kind, how.toString(), bytes);
    }

    /** Runs the next {@code count} inputs. */
    public void run(long count) {
        long start = System.nanoTime();
        for (long end = inputs + count; inputs < end; inputs++) {
            Input input = input(target, seed, inputs);
            try {
                outcomes.merge(target.run(input.bytes()), 1L, Long::sum);
            } catch (Throwable error) {
                findingCount++;
                outcomes.merge("FINDING " + error.getClass().getSimpleName(), 1L, Long::sum);
                if (findings.size() < FINDINGS_KEPT) {
                    findings.add(new Finding(target.name(), input, error));
                }
            }
        }
        elapsedNanos += System.nanoTime() - start;
    }

    /**
     * Runs {@code inputs} inputs of {@code seed} on {@code target}, closes it, and fails with the first finding's
     * report if there was any, or when no input was accepted or none refused (the generator would then miss one
     * side).
     */
    public static FuzzCampaign check(FuzzTarget target, long seed, long inputs) throws Exception {
        FuzzCampaign campaign = new FuzzCampaign(target, seed);
        try (target) {
            campaign.run(inputs);
        }
        campaign.assertNoFinding();
        if (campaign.count(FuzzTarget.ACCEPTED) == 0 || campaign.count(FuzzTarget.REFUSED) == 0) {
            throw new AssertionError("a campaign should both accept and refuse inputs: " + campaign.summary());
        }
        return campaign;
    }

    /** Inputs whose outcome label starts with {@code prefix}. */
    public long count(String prefix) {
        long count = 0;
        for (Map.Entry<String, Long> outcome : outcomes.entrySet()) {
            if (outcome.getKey().startsWith(prefix)) {
                count += outcome.getValue();
            }
        }
        return count;
    }

    /** Fails with the report of the first finding, and how many there were, if there was any. */
    public void assertNoFinding() {
        if (findingCount > 0) {
            throw new AssertionError(findingCount + " of " + inputs + " inputs had an unexpected outcome; the first: "
                    + findings.get(0).report());
        }
    }

    public String targetName() {
        return target.name();
    }

    public long inputs() {
        return inputs;
    }

    /** Inputs per outcome label, by label. */
    public Map<String, Long> outcomes() {
        return Collections.unmodifiableMap(outcomes);
    }

    public List<Finding> findings() {
        return Collections.unmodifiableList(findings);
    }

    public long findingCount() {
        return findingCount;
    }

    public long elapsedNanos() {
        return elapsedNanos;
    }

    /** One line: the target, its inputs, time and outcomes. */
    public String summary() {
        StringBuilder line = new StringBuilder(String.format("%-22s %,11d inputs %7.1f s ", target.name(), inputs,
                elapsedNanos / 1e9));
        outcomes.forEach((outcome, count) -> line.append(String.format(" | %s %,d", outcome, count)));
        return line.toString();
    }

    /** The murmur3 finalizer: spreads a seed's bits so neighbouring seeds and indexes give unrelated inputs. */
    private static long mix(long value) {
        long z = value;
        z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
        z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
        return z ^ (z >>> 33);
    }
}
