package io.tidemark.proto.record;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.fuzz.BatchGenerator;
import io.tidemark.proto.fuzz.FuzzFailure;
import io.tidemark.proto.fuzz.FuzzTarget;
import io.tidemark.proto.fuzz.Mutator;
import io.tidemark.proto.record.MirroredBatchScanner.OriginRange;
import io.tidemark.proto.record.ProvenanceHeaders.Provenance;
import io.tidemark.proto.record.RecordBatchValidator.SendTimeWindow;
import io.tidemark.proto.v1.ErrorCode;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static io.tidemark.proto.fuzz.FuzzFailure.check;
import static io.tidemark.proto.fuzz.FuzzFailure.checkEquals;

/**
 * {@link RecordBatchValidator#validate} on any bytes, under every {@link SendTimeWindow} the broker uses: unbounded
 * (admission, recovery, copies, the client's fetch) and the topic windows around a ReceiveTime (the defaults, the
 * tightest, both limits, a lower limit only).
 * <ul>
 *   <li>Only {@link TidemarkException}s escape: CORRUPT_BATCH, and INVALID_TIMESTAMP only under a window.</li>
 *   <li>A batch accepted unbounded is read back whole ({@link RecordBatchReader#decodeBatch}): the record count the
 *       header says, offsets base + 0..n-1, record 0 at First SendTime, the largest SendTime the header's Max
 *       SendTime, the smallest {@link RecordBatchValidator#minSendTimeMs}; a marker is 74 bytes of one record.</li>
 *   <li>Under a window it is accepted exactly when {@link SendTimeWindow#admits} says so (the leader decides by
 *       {@code admits} and names the record by validating again: a disagreement throws there), else refused
 *       INVALID_TIMESTAMP; a batch refused unbounded is refused under a window too.</li>
 *   <li>An accepted mirrored batch is scanned ({@link MirroredBatchScanner}): CORRUPT_BATCH or an origin range whose
 *       first and last origin offsets are the provenance of its first and last record.</li>
 *   <li>The validator reads only the bytes it is given: the input lies at a position inside its buffer and ends at
 *       the buffer's limit, in a heap buffer, a read-only one (as gRPC hands a produce request's batch over) or a
 *       direct one, and it is left unchanged.</li>
 * </ul>
 *
 * <p>Not thread-safe.
 */
public final class RecordBatchValidatorFuzzTarget implements FuzzTarget {
    /** 2026-01-01T00:00:00Z: the ReceiveTime the windows are around and SendTimes are drawn around. */
    public static final long NOW_MS = 1_767_225_600_000L;
    /** The topic windows: defaults (1 h after, unlimited before), the tightest, both limits, a lower limit only. */
    private static final List<SendTimeWindow> WINDOWS = List.of(SendTimeWindow.around(NOW_MS, 3_600_000, -1),
            SendTimeWindow.around(NOW_MS, 0, 0), SendTimeWindow.around(NOW_MS, 60_000, 86_400_000),
            SendTimeWindow.around(NOW_MS, -1, 1_000));
    /** The direct buffer inputs are placed in, grown as needed. */
    private static final ThreadLocal<ByteBuffer> DIRECT = ThreadLocal.withInitial(
            () -> ByteBuffer.allocateDirect(1 << 16));

    private final BatchGenerator batches = new BatchGenerator(NOW_MS);
    private final RecordBatchValidator validator = new RecordBatchValidator();
    private final RecordBatchReader reader = new RecordBatchReader();
    private final MirroredBatchScanner scanner = new MirroredBatchScanner();
    private final List<Record> records = new ArrayList<>();

    @Override
    public String name() {
        return "validator";
    }

    @Override
    public byte[] valid(SplittableRandom random, StringBuilder how) {
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
    public String run(byte[] input) {
        ByteBuffer buffer = placed(input);
        int position = buffer.position();
        int size;
        try {
            size = validator.validate(buffer, position, input.length, SendTimeWindow.UNBOUNDED);
        } catch (TidemarkException e) {
            checkEquals(ErrorCode.CORRUPT_BATCH, e.code(), "the code of an unbounded refusal (" + e.getMessage() + ")");
            for (SendTimeWindow window : WINDOWS) {
                refusedUnder(window, buffer, position, input.length);
            }
            checkUnchanged(buffer, input);
            return REFUSED + " CORRUPT_BATCH";
        }
        long minSendTimeMs = validator.minSendTimeMs();
        checkReadBack(buffer, position, size, input.length, minSendTimeMs);
        boolean outsideAWindow = false;
        for (SendTimeWindow window : WINDOWS) {
            outsideAWindow |= !acceptedUnder(window, buffer, position, input.length, size, minSendTimeMs);
        }
        String label = ACCEPTED;
        if (RecordBatchFormat.mirrored(buffer, position)) {
            label += scanned(buffer, position) ? " mirrored" : " mirrored, scan CORRUPT_BATCH";
        } else if (RecordBatchFormat.control(buffer, position)) {
            label += " marker";
        }
        checkUnchanged(buffer, input);
        return outsideAWindow ? label + ", INVALID_TIMESTAMP in a window" : label;
    }

    /**
     * The input at a position inside a buffer that ends with it: after up to 7 bytes of other data, in a heap buffer, a
     * read-only view (no array: the CRC is computed through a duplicate) or a direct buffer, chosen from the input's
     * bytes so an input is always placed the same way.
     */
    static ByteBuffer placed(byte[] input) {
        int hash = Arrays.hashCode(input);
        int before = (hash >>> 4) & 7;
        ByteBuffer buffer = switch (Math.floorMod(hash, 3)) {
            case 0 -> ByteBuffer.allocate(before + input.length);
            case 1 -> direct(before + input.length);
            default -> ByteBuffer.allocate(before + input.length);
        };
        for (int i = 0; i < before; i++) {
            buffer.put((byte) (0xa5 ^ i));
        }
        buffer.put(input).position(before);
        return Math.floorMod(hash, 3) == 2 ? buffer.asReadOnlyBuffer() : buffer;
    }

    /** A direct buffer of {@code size} bytes, a slice of one kept per thread: direct allocation is slow. */
    private static ByteBuffer direct(int size) {
        ByteBuffer kept = DIRECT.get();
        if (kept.capacity() < size) {
            kept = ByteBuffer.allocateDirect(Math.max(size, 2 * kept.capacity()));
            DIRECT.set(kept);
        }
        return kept.clear().limit(size).slice();
    }

    private void checkReadBack(ByteBuffer buffer, int position, int size, int available, long minSendTimeMs) {
        checkEquals(RecordBatchFormat.totalSize(buffer, position), size, "the accepted batch's size");
        check(size >= RecordBatchFormat.HEADER_SIZE_BYTES && size <= available, "accepted batch of " + size
                + " bytes in " + available);
        int count = RecordBatchFormat.recordCount(buffer, position);
        long base = RecordBatchFormat.baseOffset(buffer, position);
        records.clear();
        reader.decodeBatch(buffer, position, records);
        checkEquals(count, records.size(), "records read back from the accepted batch");
        long max = Long.MIN_VALUE;
        long min = Long.MAX_VALUE;
        for (int i = 0; i < count; i++) {
            Record record = records.get(i);
            checkEquals(base + i, record.offset(), "the offset of record " + i);
            checkEquals(RecordBatchFormat.receiveTime(buffer, position), record.receiveTimeMs(), "ReceiveTime");
            check(record.sendTimeMs() >= 0, "record " + i + " has SendTime " + record.sendTimeMs());
            max = Math.max(max, record.sendTimeMs());
            min = Math.min(min, record.sendTimeMs());
        }
        checkEquals(RecordBatchFormat.firstSendTime(buffer, position), records.get(0).sendTimeMs(),
                "record 0's SendTime against First SendTime");
        checkEquals(RecordBatchFormat.maxSendTime(buffer, position), max, "Max SendTime against the records'");
        checkEquals(minSendTimeMs, min, "the validator's smallest SendTime against the records'");
        if (RecordBatchFormat.control(buffer, position)) {
            check(size == TransactionMarker.SIZE_BYTES && count == 1, "an accepted marker of " + size + " bytes and "
                    + count + " records");
        }
    }

    /** Validates under {@code window}; returns whether it accepted, failing when it disagrees with {@code admits}. */
    private boolean acceptedUnder(SendTimeWindow window, ByteBuffer buffer, int position, int available, int size,
                                  long minSendTimeMs) {
        boolean admits = window.admits(minSendTimeMs, RecordBatchFormat.maxSendTime(buffer, position));
        try {
            checkEquals(size, validator.validate(buffer, position, available, window), "size under " + window);
            check(admits, "validated under " + window + " but admits() refuses SendTimes " + minSendTimeMs + ".."
                    + RecordBatchFormat.maxSendTime(buffer, position));
            return true;
        } catch (TidemarkException e) {
            checkEquals(ErrorCode.INVALID_TIMESTAMP, e.code(), "the code under " + window + " of a batch accepted "
                    + "unbounded (" + e.getMessage() + ")");
            check(!admits, "refused under " + window + " but admits() takes SendTimes " + minSendTimeMs + ".."
                    + RecordBatchFormat.maxSendTime(buffer, position) + ": " + e.getMessage());
            return false;
        }
    }

    private void refusedUnder(SendTimeWindow window, ByteBuffer buffer, int position, int available) {
        try {
            validator.validate(buffer, position, available, window);
            throw new FuzzFailure("accepted under " + window + " but refused unbounded");
        } catch (TidemarkException e) {
            check(e.code() == ErrorCode.CORRUPT_BATCH || e.code() == ErrorCode.INVALID_TIMESTAMP,
                    "the code under " + window + ": " + e.code());
        }
    }

    /** Scans an accepted mirrored batch; returns whether the scanner took it. */
    private boolean scanned(ByteBuffer buffer, int position) {
        OriginRange range;
        try {
            range = scanner.scan(buffer, position);
        } catch (TidemarkException e) {
            checkEquals(ErrorCode.CORRUPT_BATCH, e.code(), "the scanner's code (" + e.getMessage() + ")");
            return false;
        }
        Provenance first = ProvenanceHeaders.read(records.get(0).headers()).orElseThrow(
                () -> new FuzzFailure("the scanner took record 0 without provenance"));
        Provenance last = ProvenanceHeaders.read(records.get(records.size() - 1).headers()).orElseThrow(
                () -> new FuzzFailure("the scanner took the last record without provenance"));
        checkEquals(first.origin(), range.origin(), "the scanned origin against record 0's provenance");
        checkEquals(first.originOffset(), range.firstOriginOffset(), "the first origin offset");
        checkEquals(last.originOffset(), range.lastOriginOffset(), "the last origin offset");
        check(range.provenanceBytes() > 0 && range.provenanceBytes() < RecordBatchFormat.totalSize(buffer, position),
                "provenance bytes " + range.provenanceBytes());
        for (SendTimeWindow window : WINDOWS) {
            try {
                scanner.scan(buffer, position, window);
            } catch (TidemarkException e) {
                checkEquals(ErrorCode.INVALID_TIMESTAMP, e.code(), "the scanner's code under " + window);
            }
        }
        return true;
    }

    private static void checkUnchanged(ByteBuffer buffer, byte[] input) {
        byte[] now = new byte[input.length];
        buffer.get(buffer.position(), now);
        check(Arrays.equals(input, now), "the validator changed the batch it checked");
    }
}
