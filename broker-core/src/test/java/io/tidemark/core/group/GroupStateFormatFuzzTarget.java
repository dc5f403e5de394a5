package io.tidemark.core.group;

import io.tidemark.proto.fuzz.FuzzTarget;
import io.tidemark.proto.fuzz.RandomMessages;
import io.tidemark.proto.v1.ConsumerGroupState;

import java.util.SplittableRandom;

import static io.tidemark.proto.fuzz.FuzzFailure.check;
import static io.tidemark.proto.fuzz.FuzzFailure.checkEquals;

/**
 * {@link GroupStateFormat}'s readers on any bytes, as the group coordinator replays {@code __group_offsets}: an input
 * that {@link GroupStateFormat#isGroupStateKey} takes is read as a key, every input as a value; each gives a group or
 * state that encodes and reads back the same, or throws the {@link IllegalStateException} the replay skips the record
 * for.
 *
 * <p>Stateless.
 */
public final class GroupStateFormatFuzzTarget implements FuzzTarget {
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
        String key = "no key";
        if (GroupStateFormat.isGroupStateKey(input)) {
            try {
                String group = GroupStateFormat.readGroup(input);
                check(group.length() <= input.length, "a group of " + group.length() + " chars from " + input.length
                        + " bytes");
                key = "key " + ACCEPTED;
            } catch (IllegalStateException e) {
                key = "key " + REFUSED;
            }
        }
        String value;
        try {
            ConsumerGroupState state = GroupStateFormat.readValue(input);
            checkEquals(state, GroupStateFormat.readValue(GroupStateFormat.value(state)), "the state read back");
            value = "value " + ACCEPTED;
        } catch (IllegalStateException e) {
            value = "value " + REFUSED;
        }
        return (key.endsWith(ACCEPTED) || value.endsWith(ACCEPTED) ? ACCEPTED : REFUSED) + ": " + key + ", " + value;
    }
}
