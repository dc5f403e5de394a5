package io.tidemark.core.group;

import java.util.function.Function;
import java.util.function.Predicate;

import static io.tidemark.proto.fuzz.FuzzFailure.check;
import static io.tidemark.proto.fuzz.FuzzFailure.checkEquals;
import static io.tidemark.proto.fuzz.FuzzTarget.ACCEPTED;
import static io.tidemark.proto.fuzz.FuzzTarget.REFUSED;

/**
 * The fuzz run of a {@code __group_offsets} record kind read as its coordinator replays it: an input {@code isKey}
 * takes is read as a key (a name no longer than the input), every input as a value that encodes and reads back the
 * same; each read either succeeds or throws the {@link IllegalStateException} the replay skips the record for.
 *
 * @param <S> the value's message
 */
public record KeyedStateReads<S>(Predicate<byte[]> isKey, Function<byte[], String> readKey,
                                 Function<byte[], S> readValue, Function<S, byte[]> writeValue) {
    /** The outcome of one input, as {@link io.tidemark.proto.fuzz.FuzzTarget#run} answers it. */
    public String run(byte[] input) {
        String key = "no key";
        if (isKey.test(input)) {
            try {
                String name = readKey.apply(input);
                check(name.length() <= input.length, "a name of " + name.length() + " chars from " + input.length
                        + " bytes");
                key = "key " + ACCEPTED;
            } catch (IllegalStateException e) {
                key = "key " + REFUSED;
            }
        }
        String value;
        try {
            S state = readValue.apply(input);
            checkEquals(state, readValue.apply(writeValue.apply(state)), "the state read back");
            value = "value " + ACCEPTED;
        } catch (IllegalStateException e) {
            value = "value " + REFUSED;
        }
        return (key.endsWith(ACCEPTED) || value.endsWith(ACCEPTED) ? ACCEPTED : REFUSED) + ": " + key + ", " + value;
    }
}
