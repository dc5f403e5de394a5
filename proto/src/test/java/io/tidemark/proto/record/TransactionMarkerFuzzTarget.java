package io.tidemark.proto.record;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.fuzz.BatchGenerator;
import io.tidemark.proto.fuzz.FuzzTarget;
import io.tidemark.proto.fuzz.Mutator;
import io.tidemark.proto.record.RecordBatchValidator.SendTimeWindow;
import io.tidemark.proto.v1.ErrorCode;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

import static io.tidemark.proto.fuzz.FuzzFailure.check;
import static io.tidemark.proto.fuzz.FuzzFailure.checkEquals;

/**
 * Transaction markers ({@link TransactionMarker}) mutated, through {@link RecordBatchValidator} as the broker takes
 * them (the coordinator's WriteTxnMarker, and a client's produce of one, refused after it is validated): only
 * CORRUPT_BATCH escapes, and an accepted marker is exactly the marker {@link TransactionMarker#build} makes of what it
 * says ({@link TransactionMarker#commits}, {@link TransactionMarker#coordinatorEpoch}, its producer and time), stamped
 * with its base offset and ReceiveTime: no byte of an accepted marker goes unchecked.
 *
 * <p>Not thread-safe.
 */
public final class TransactionMarkerFuzzTarget implements FuzzTarget {
    private final BatchGenerator batches = new BatchGenerator(RecordBatchValidatorFuzzTarget.NOW_MS);
    private final RecordBatchValidator validator = new RecordBatchValidator();

    @Override
    public String name() {
        return "marker";
    }

    @Override
    public byte[] valid(SplittableRandom random, StringBuilder how) {
        return batches.marker(random, how, batches.producer(random), random.nextInt());
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
        ByteBuffer batch = RecordBatchValidatorFuzzTarget.placed(input);
        int position = batch.position();
        try {
            validator.validate(batch, position, input.length, SendTimeWindow.UNBOUNDED);
        } catch (TidemarkException e) {
            checkEquals(ErrorCode.CORRUPT_BATCH, e.code(), "the code of a refusal (" + e.getMessage() + ")");
            return REFUSED + " CORRUPT_BATCH";
        }
        if (!RecordBatchFormat.control(batch, position)) {
            return ACCEPTED + " (no marker)";
        }
        ByteBuffer rebuilt = TransactionMarker.build(RecordBatchFormat.producerId(batch, position),
                RecordBatchFormat.producerEpoch(batch, position), TransactionMarker.commits(batch, position),
                TransactionMarker.coordinatorEpoch(batch, position), RecordBatchFormat.firstSendTime(batch, position));
        RecordBatchFormat.stamp(new CRC32C(), rebuilt, 0, RecordBatchFormat.baseOffset(batch, position),
                RecordBatchFormat.receiveTime(batch, position));
        byte[] accepted = new byte[TransactionMarker.SIZE_BYTES];
        batch.get(position, accepted);
        check(Arrays.equals(BatchGenerator.bytes(rebuilt), accepted), "an accepted marker differs from the one "
                + "built of what it says");
        check(input.length >= TransactionMarker.SIZE_BYTES, "a marker accepted in " + input.length + " bytes");
        return ACCEPTED + (TransactionMarker.commits(batch, position) ? " commit" : " abort");
    }
}
