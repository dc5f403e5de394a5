package io.tidemark.core.topic;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.fuzz.BatchGenerator;
import io.tidemark.proto.fuzz.FuzzTarget;
import io.tidemark.proto.fuzz.Mutator;
import io.tidemark.proto.mirror.MirrorStateFormat;
import io.tidemark.proto.mirror.MirrorStateFuzzTarget;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchValidatorFuzzTarget;
import io.tidemark.proto.v1.ErrorCode;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

import static io.tidemark.proto.fuzz.FuzzFailure.check;

/**
 * {@link InternalTopicWrites#checkProduce} on a client's batch for {@value MirrorStateFormat#TOPIC}, which it reads
 * before the partition validates it: it must end, and either take the batch or refuse it with CORRUPT_BATCH or
 * INTERNAL_TOPIC. The inputs are batches of mirror state records (some without a key or value), mutated.
 *
 * <p>Not thread-safe.
 */
public final class InternalTopicWritesFuzzTarget implements FuzzTarget {
    private final MirrorStateFuzzTarget values = new MirrorStateFuzzTarget();

    @Override
    public String name() {
        return "internal-topic-produce";
    }

    @Override
    public byte[] valid(SplittableRandom random, StringBuilder how) {
        RecordBatchBuilder builder = new RecordBatchBuilder();
        int count = 1 + random.nextInt(random.nextInt(4) == 0 ? 20 : 3);
        how.append(count).append(" records of ");
        for (int i = 0; i < count; i++) {
            byte[] key = random.nextInt(20) == 0 ? null : ("heartbeat/c" + i).getBytes(StandardCharsets.UTF_8);
            byte[] value = random.nextInt(20) == 0 ? null : values.valid(random, how);
            builder.append(RecordBatchValidatorFuzzTarget.NOW_MS + i, key, value);
        }
        return BatchGenerator.bytes(builder.build());
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
        try {
            InternalTopicWrites.checkProduce(MirrorStateFormat.TOPIC, ByteBuffer.wrap(input).asReadOnlyBuffer());
            return ACCEPTED;
        } catch (TidemarkException e) {
            check(e.code() == ErrorCode.CORRUPT_BATCH || e.code() == ErrorCode.INTERNAL_TOPIC, "refused with "
                    + e.code() + ": " + e.getMessage());
            return REFUSED + " " + e.code();
        }
    }
}
