package io.tidemark.core.log;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.fuzz.BatchGenerator;
import io.tidemark.proto.fuzz.BatchGenerator.Producer;
import io.tidemark.proto.fuzz.FuzzFailure;
import io.tidemark.proto.fuzz.FuzzTarget;
import io.tidemark.proto.fuzz.Mutator;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchReader;
import io.tidemark.proto.record.RecordBatchValidatorFuzzTarget;
import io.tidemark.proto.v1.ErrorCode;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

import static io.tidemark.proto.fuzz.FuzzFailure.check;
import static io.tidemark.proto.fuzz.FuzzFailure.checkEquals;

/**
 * A real {@link PartitionLog} in a directory of its own, fed produced batches the way a partition's leader takes them:
 * {@link BatchAdmission#admit} under the topic's config, the SendTime check once the ReceiveTime {@code max(now, last)}
 * is stamped, then {@link PartitionLog#append}.
 * <ul>
 *   <li>Only documented refusals escape: the admission's RECORD_TOO_LARGE, CORRUPT_BATCH and INVALID_TIMESTAMP; the
 *       log's OUT_OF_ORDER_SEQUENCE, INVALID_PRODUCER_EPOCH, ORIGIN_OFFSET_HELD, INVALID_TXN_STATE and
 *       INVALID_TIMESTAMP.</li>
 *   <li>No broker state is changed by a refused input: the log's {@link AppendState} (log end offset, last
 *       ReceiveTime, producers, origin offsets, transactions), its segments, the files in its directory, and the size
 *       and CRC of every file an append or a roll writes (the active segment's, the recovery point, the origin
 *       snapshots) are what they were.</li>
 *   <li>An accepted batch is read back exactly: at the log end offset it was given, its bytes those produced with the
 *       base offset, ReceiveTime and CRC stamped, its records the count its header says; a duplicate of an idempotent
 *       producer's batch changes nothing.</li>
 *   <li>Every {@value #REOPEN_EVERY} inputs the log is closed and opened again from its files, and holds the same
 *       state: what it stored can be recovered. A log grown past {@value #LOG_BYTES_MAX} bytes then starts again,
 *       empty, at its end offset.</li>
 * </ul>
 * The batches come from a few producers and origins whose next sequences and origin offsets the target keeps, so that
 * a good share is accepted; mutations aim at the header's fields and records, and most get their CRC recomputed.
 * ReceiveTime moves on by up to 200 ms an input (one in 40 gets a ReceiveTime below the last, which the log refuses).
 * Producers never expire here ({@code producer.id.expiration.ms} unlimited): a refused batch's check forgets the
 * expired ones, as any append at that time would, and the comparison would take that for a change.
 *
 * <p>Not thread-safe. Closing it closes the log and deletes its directory if the target made it.
 */
public final class PartitionLogFuzzTarget implements FuzzTarget {
    static final int REOPEN_EVERY = 2_000;
    /** The most bytes the log's segments hold before it starts again empty (at a reopening). */
    static final long LOG_BYTES_MAX = 1L << 20;
    /** What one Raft entry carries: more than max.batch.bytes, so the topic's limit is the one met. */
    private static final int LARGEST_BATCH_BYTES = 2 << 20;
    private static final Set<ErrorCode> ADMISSION_REFUSALS = EnumSet.of(ErrorCode.RECORD_TOO_LARGE,
            ErrorCode.CORRUPT_BATCH, ErrorCode.INVALID_TIMESTAMP);
    private static final Set<ErrorCode> LOG_REFUSALS = EnumSet.of(ErrorCode.OUT_OF_ORDER_SEQUENCE,
            ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.ORIGIN_OFFSET_HELD, ErrorCode.INVALID_TXN_STATE,
            ErrorCode.INVALID_TIMESTAMP);

    private final Path dir;
    private final boolean ownsDir;
    /**
     * Small segments and indexes, so that appends roll segments and fill indexes often and the active segment's files,
     * read at every input, stay small.
     */
    private final TopicConfig config = TopicConfig.parse(Map.of("segment.bytes", "32768",
            "segment.index.bytes", "4096", "index.interval.bytes", "512", "send.time.after.max.ms", "3600000",
            "send.time.before.max.ms", "86400000", "max.batch.bytes", "65536"));
    private final BatchGenerator batches = new BatchGenerator(RecordBatchValidatorFuzzTarget.NOW_MS);
    private final BatchAdmission admission = new BatchAdmission();
    private final RecordBatchReader reader = new RecordBatchReader();
    private final CRC32C crc = new CRC32C();
    /** The target's own clock and choices, so a campaign runs the same every time. */
    private final SplittableRandom random;
    private final Producer[] producers = new Producer[4];
    private final OriginPartition[] origins = new OriginPartition[2];
    private final long[] nextOriginOffsets = new long[2];
    private PartitionLog log;
    private long nowMs = RecordBatchValidatorFuzzTarget.NOW_MS;
    private long inputs;
    /** The log's state after the last input: the state every refusal must leave. */
    private Snapshot last;

    /** A log in a new temporary directory, deleted on close. */
    public PartitionLogFuzzTarget(long seed) throws IOException {
        this(Files.createTempDirectory("tidemark-fuzz-"), true, seed);
    }

    /** A log in {@code dir}, which is left on close. */
    public PartitionLogFuzzTarget(Path dir, long seed) throws IOException {
        this(dir, false, seed);
    }

    private PartitionLogFuzzTarget(Path dir, boolean ownsDir, long seed) throws IOException {
        this.dir = dir;
        this.ownsDir = ownsDir;
        this.random = new SplittableRandom(seed);
        this.log = opened(PartitionLog.open(dir, config, nowMs));
        for (int i = 0; i < producers.length; i++) {
            producers[i] = new Producer(1000 + i, (short) random.nextInt(3), i == 0 ? Integer.MAX_VALUE - 20 : 0);
        }
        for (int i = 0; i < origins.length; i++) {
            origins[i] = batches.origin(random);
        }
        this.last = snapshot();
    }

    @Override
    public String name() {
        return "partition-log";
    }

    /**
     * A batch of one of the producers or origins the target follows (at its next sequence or origin offset, or a
     * stale one), a marker of one of them, or any batch.
     */
    @Override
    public byte[] valid(SplittableRandom random, StringBuilder how) {
        int roll = random.nextInt(100);
        int p = random.nextInt(producers.length);
        Producer producer = producers[p];
        if (random.nextInt(10) == 0) {
            producer = new Producer(producer.id(), producer.epoch(),
                    (int) ProducerStateTable.advance(producer.sequence(), Integer.MAX_VALUE - random.nextInt(8)));
        }
        if (roll < 35) {
            return batches.plain(random, how, null, false);
        }
        if (roll < 60) {
            return batches.plain(random, how, producer, false);
        }
        if (roll < 70) {
            return batches.plain(random, how, producer, true);
        }
        if (roll < 85) {
            int o = random.nextInt(origins.length);
            long first = nextOriginOffsets[o] - (random.nextInt(10) == 0 ? 1 + random.nextInt(3) : 0);
            return batches.mirrored(random, how, random.nextBoolean() ? null : producer, origins[o],
                    Math.max(0, first));
        }
        if (roll < 95) {
            return batches.marker(random, how, producer, random.nextInt(3));
        }
        return batches.any(random, how);
    }

    @Override
    public byte[] mutate(byte[] input, SplittableRandom random, StringBuilder how) {
        return random.nextInt(5) < 2 ? BatchGenerator.mutateField(input, random, how)
                : Mutator.mutate(input, random, how);
    }

    @Override
    public byte[] repair(byte[] input, SplittableRandom random, StringBuilder how) {
        return BatchGenerator.repair(input, random, how);
    }

    @Override
    public String run(byte[] input) throws IOException {
        if (++inputs % REOPEN_EVERY == 0) {
            reopen();
        }
        nowMs += random.nextInt(201);
        long lastReceiveTime = log.lastReceiveTimeMs().orElse(0);
        long receiveTimeMs = random.nextInt(40) == 0 ? lastReceiveTime - 1 : Math.max(nowMs, lastReceiveTime);
        // read-only and without an array, as gRPC hands a produce request's batch over
        ByteBuffer batch = ByteBuffer.wrap(input).asReadOnlyBuffer();
        try {
            BatchAdmission.Admitted admitted = admission.admit(batch, config, LARGEST_BATCH_BYTES);
            admission.checkSendTimes(batch, admitted, config, receiveTimeMs);
        } catch (TidemarkException e) {
            return refused(e, ADMISSION_REFUSALS, "admission");
        }
        AppendResult result;
        try {
            result = log.append(batch, receiveTimeMs);
        } catch (TidemarkException e) {
            return refused(e, LOG_REFUSALS, "log");
        }
        if (result.baseOffset() < last.state().logEndOffset()) {
            checkEquals(last, snapshot(), "the log after a duplicate of a batch it holds");
            return ACCEPTED + " duplicate";
        }
        checkAppended(input, result, receiveTimeMs);
        follow(input, result);
        last = snapshot();
        return ACCEPTED;
    }

    private String refused(TidemarkException e, Set<ErrorCode> documented, String by) throws IOException {
        check(documented.contains(e.code()), "refused by the " + by + " with " + e.code() + ": " + e.getMessage());
        Snapshot now = snapshot();
        if (!now.equals(last)) {
            throw new FuzzFailure("a batch refused by the " + by + " (" + e.code() + ": " + e.getMessage()
                    + ") changed the log: before " + last + ", after " + now);
        }
        return REFUSED + " by the " + by + " " + e.code();
    }

    private void checkAppended(byte[] input, AppendResult result, long receiveTimeMs) throws IOException {
        ByteBuffer produced = ByteBuffer.wrap(input);
        long base = last.state().logEndOffset();
        int count = RecordBatchFormat.recordCount(produced, 0);
        checkEquals(new AppendResult(base, base + count - 1, receiveTimeMs), result, "the append's result");
        checkEquals(base + count, log.logEndOffset(), "the log end offset after the append");
        ByteBuffer expected = ByteBuffer.wrap(input.clone());
        RecordBatchFormat.stamp(crc, expected, 0, base, receiveTimeMs);
        ByteBuffer read = log.read(base, input.length).batches();
        byte[] stored = new byte[Math.min(read.remaining(), input.length)];
        read.duplicate().get(stored);
        check(Arrays.equals(expected.array(), stored), "the batch read back at offset " + base
                + " differs from the one appended");
        List<Record> records = reader.records(read);
        checkEquals(count, records.size(), "records read back");
        checkEquals(base + count - 1, records.get(count - 1).offset(), "the last record's offset");
    }

    /** Moves the producers' next sequences and the origins' next offsets past an accepted batch. */
    private void follow(byte[] input, AppendResult result) {
        ByteBuffer batch = ByteBuffer.wrap(input);
        long producerId = RecordBatchFormat.producerId(batch, 0);
        for (int i = 0; i < producers.length; i++) {
            if (producers[i].id() == producerId && !RecordBatchFormat.control(batch, 0)) {
                producers[i] = new Producer(producerId, RecordBatchFormat.producerEpoch(batch, 0),
                        ProducerStateTable.advance(RecordBatchFormat.baseSequence(batch, 0),
                                result.lastOffset() - result.baseOffset() + 1));
            }
        }
        for (int i = 0; i < origins.length; i++) {
            int o = i;
            log.heldOrigin(origins[i]).ifPresent(held -> nextOriginOffsets[o] = held.originOffset() + 1);
        }
    }

    /**
     * Closes the log and opens it again from its files: it must hold what it held. A log past
     * {@value #LOG_BYTES_MAX} bytes then starts again empty at its end offset, so a long campaign's reopening reads a
     * bounded log.
     */
    private void reopen() throws IOException {
        Snapshot before = snapshot();
        log.close();
        log = opened(PartitionLog.open(dir, config, nowMs));
        checkEquals(before.state(), log.appendState(), "the log's state opened again from its files");
        checkEquals(before.segments(), log.segments(), "the segments opened again");
        if (before.bytes() > LOG_BYTES_MAX) {
            long end = log.logEndOffset();
            log.close();
            log = opened(PartitionLog.recreate(dir, config, end, nowMs));
        }
        last = snapshot();
    }

    /** {@code log}, its producers never expiring (see the class comment). */
    private static PartitionLog opened(PartitionLog log) {
        log.producerIdExpirationMs(Long.MAX_VALUE);
        return log;
    }

    /**
     * What a refused batch must leave as it was: the log's append state and segments, the names of the files in its
     * directory, and the size and CRC of each file of the active segment (the files an append writes) and of each file
     * that is no segment's (the recovery point, the origin snapshots).
     */
    private record Snapshot(AppendState state, List<SegmentInfo> segments, Set<String> fileNames,
                            Map<String, List<Long>> writtenFiles) {
        long bytes() {
            return segments.stream().mapToLong(SegmentInfo::sizeBytes).sum();
        }
    }

    private Snapshot snapshot() throws IOException {
        List<SegmentInfo> segments = log.segments();
        String active = String.format("%020d", segments.get(segments.size() - 1).baseOffset());
        Set<String> names = new TreeSet<>();
        Map<String, List<Long>> written = new TreeMap<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                String name = file.getFileName().toString();
                names.add(name);
                if (name.startsWith(active) || !Character.isDigit(name.charAt(0))) {
                    byte[] bytes = Files.readAllBytes(file);
                    crc.reset();
                    crc.update(bytes);
                    written.put(name, List.of((long) bytes.length, crc.getValue()));
                }
            }
        }
        return new Snapshot(log.appendState(), segments, names, written);
    }

    @Override
    public void close() throws IOException {
        log.close();
        if (ownsDir) {
            DurableFiles.deleteTree(dir);
        }
    }
}
