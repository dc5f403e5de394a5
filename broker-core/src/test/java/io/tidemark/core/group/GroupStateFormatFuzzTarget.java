package io.tidemark.core.group;

import io.tidemark.proto.fuzz.FuzzTarget;
import io.tidemark.proto.fuzz.RandomMessages;
import io.tidemark.proto.v1.ConsumerGroupState;

import java.util.SplittableRandom;

/**
 * {@link GroupStateFormat}'s readers on any bytes, as the group coordinator replays {@code __group_offsets}: an input
 * that {@link GroupStateFormat#isGroupStateKey} takes is read as a key, every input as a value; each gives a group or
 * state that encodes and reads back the same, or throws the {@link IllegalStateException} the replay skips the record
 * for.
 *
 * <p>Stateless.
 */
public final class GroupStateFormatFuzzTarget implements FuzzTarget {
    private static final KeyedStateReads<ConsumerGroupState> READS = new KeyedStateReads<>(
            GroupStateFormat::isGroupStateKey, GroupStateFormat::readGroup, GroupStateFormat::readValue,
            GroupStateFormat::value);

    @Override
    public String name() {
        return "group-state";
    }

    @Override
    public byte[] valid(SplittableRandom random, StringBuilder how) {
        if (random.nextBoolean()) {
            how.append("group state key");
            return GroupStateFormat.key(OffsetCommitFormatFuzzTarget.name(random));
        }
        how.append("group state value");
        return GroupStateFormat.value(RandomMessages.fill(ConsumerGroupState.getDefaultInstance(), random, 3));
    }

    @Override
    public String run(byte[] input) {
        return READS.run(input);
    }
}
