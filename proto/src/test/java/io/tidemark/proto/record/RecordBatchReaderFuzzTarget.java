package io.tidemark.proto.record;

import io.tidemark.proto.fuzz.BatchGenerator;
import io.tidemark.proto.fuzz.FuzzTarget;
import io.tidemark.proto.fuzz.Mutator;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.SplittableRandom;

import static io.tidemark.proto.fuzz.FuzzFailure.check;

/**
 * {@link RecordBatchReader#records} on bytes nobody validated, as the broker reads a client's batch for an internal
 * topic before appending it ({@code InternalTopicWrites}): it must end, and either return the records of the whole
 * batches there (never more than the bytes can hold: a record takes at least 6 bytes, a batch 60) or throw a
 * {@link RecordFormatException}. The inputs are one to three batches back to back, mutated.
 *
 * <p>Not thread-safe.
 */
public final class RecordBatchReaderFuzzTarget implements FuzzTarget {
    /** Length, offset delta, SendTime delta, key and value lengths and header count: a byte each at least. */
    private static final int SMALLEST_RECORD_BYTES = 6;

    private final BatchGenerator batches = new BatchGenerator(RecordBatchValidatorFuzzTarget.NOW_MS);
    private final RecordBatchReader reader = new RecordBatchReader();

    @Override
    public String name() {
        return "reader";
    }

    @Override
    public byte[] valid(SplittableRandom random, StringBuilder how) {
        byte[] bytes = batches.any(random, how);
        for (int more = random.nextInt(3); more > 0; more--) {
            how.append(" + ");
            bytes = Mutator.concat(bytes, batches.any(random, how));
        }
        return bytes;
    }

    @Override
    public byte[] mutate(byte[] input, SplittableRandom random, StringBuilder how) {
        return random.nextBoolean() ? BatchGenerator.mutateField(input, random, how)
                : Mutator.mutate(input, random, how);
    }

    @Override
    public byte[] repair(byte[] input, SplittableRandom random, StringBuilder how) {
        return BatchGenerator.repair(input, random, how);
    }

    @Override
    public String run(byte[] input) {
        List<Record> records;
        try {
            records = reader.records(ByteBuffer.wrap(input));
        } catch (RecordFormatException e) {
            return REFUSED + " RecordFormatException";
        }
        check(records.size() <= input.length / SMALLEST_RECORD_BYTES, records.size() + " records read from "
                + input.length + " bytes");
        return records.isEmpty() ? ACCEPTED + ", no whole batch" : ACCEPTED;
    }
}
