package io.tidemark.core.group;

import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.fuzz.FuzzTarget;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

import static io.tidemark.proto.fuzz.FuzzFailure.checkEquals;

/**
 * {@link OffsetCommitFormat}'s readers on any bytes, as the group coordinator replays {@code __group_offsets}: every
 * input is read as a key and as a value, and each either gives a key or value that encodes and reads back the same, or
 * throws the {@link IllegalStateException} the replay skips the record for (a version it does not read, bytes that
 * are not of the format), never an exception of a buffer or an allocation of the length a field claims.
 *
 * <p>Stateless.
 */
public final class OffsetCommitFormatFuzzTarget implements FuzzTarget {
    static final String[] NAMES = {"", "g", "orders", "ü-ñ-名", "group-with-a-longer-name.v2", "x".repeat(255)};

    @Override
    public String name() {
        return "offset-commit";
    }

    @Override
    public byte[] valid(SplittableRandom random, StringBuilder how) {
        if (random.nextBoolean()) {
            how.append("offset commit key");
            return OffsetCommitFormat.key(name(random), new TopicPartition(name(random), random.nextInt(1 << 16)));
        }
        how.append("offset commit value");
        return OffsetCommitFormat.value(new OffsetCommitFormat.Value(random.nextLong(), random.nextLong(),
                random.nextInt(4) == 0 ? "x".repeat(random.nextInt(4096)) : name(random)));
    }

    @Override
    public String run(byte[] input) {
        String key;
        try {
            OffsetCommitFormat.Key read = OffsetCommitFormat.readKey(input);
            if (fits(read.group()) && fits(read.partition().topic())) {
                checkEquals(read, OffsetCommitFormat.readKey(OffsetCommitFormat.key(read.group(), read.partition())),
                        "the key read back");
            }
            key = "key " + ACCEPTED;
        } catch (IllegalStateException e) {
            key = "key " + REFUSED;
        }
        String value;
        try {
            OffsetCommitFormat.Value read = OffsetCommitFormat.readValue(input);
            checkEquals(read, OffsetCommitFormat.readValue(OffsetCommitFormat.value(read)), "the value read back");
            value = "value " + ACCEPTED;
        } catch (IllegalStateException e) {
            value = "value " + REFUSED;
        }
        return (key.endsWith(ACCEPTED) || value.endsWith(ACCEPTED) ? ACCEPTED : REFUSED) + ": " + key + ", " + value;
    }

    static String name(SplittableRandom random) {
        return random.nextBoolean() ? NAMES[random.nextInt(NAMES.length)] : "n" + random.nextInt(1000);
    }

    /** Whether a name read back fits the key's int16 length (a string read from bytes that are not UTF-8 grows). */
    private static boolean fits(String name) {
        return name.getBytes(StandardCharsets.UTF_8).length <= Short.MAX_VALUE;
    }
}
