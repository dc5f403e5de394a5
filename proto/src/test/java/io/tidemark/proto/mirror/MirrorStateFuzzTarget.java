package io.tidemark.proto.mirror;

import com.google.protobuf.InvalidProtocolBufferException;
import io.tidemark.proto.fuzz.FuzzTarget;
import io.tidemark.proto.fuzz.RandomMessages;
import io.tidemark.proto.v1.MirrorCheckpoint;
import io.tidemark.proto.v1.MirrorGap;
import io.tidemark.proto.v1.MirrorHeartbeat;
import io.tidemark.proto.v1.MirrorPartitionStatus;
import io.tidemark.proto.v1.MirrorStateRecord;

import java.util.SplittableRandom;

import static io.tidemark.proto.fuzz.FuzzFailure.checkEquals;

/**
 * {@link MirrorStateFormat#parse}, which the broker runs on every record a client produces to {@value
 * MirrorStateFormat#TOPIC}: only its documented {@link IllegalArgumentException} escapes, and an accepted record
 * parses again from its own bytes to the same record (unknown kinds kept).
 *
 * <p>Stateless.
 */
public final class MirrorStateFuzzTarget implements FuzzTarget {
    @Override
    public String name() {
        return "mirror-state";
    }

    @Override
    public byte[] valid(SplittableRandom random, StringBuilder how) {
        how.append("mirror state ");
        return switch (random.nextInt(4)) {
            case 0 -> MirrorStateFormat.value(RandomMessages.fill(MirrorCheckpoint.getDefaultInstance(), random, 2));
            case 1 -> MirrorStateFormat.value(RandomMessages.fill(MirrorHeartbeat.getDefaultInstance(), random, 2));
            case 2 -> MirrorStateFormat.value(RandomMessages.fill(MirrorPartitionStatus.getDefaultInstance(), random,
                    2));
            default -> MirrorStateFormat.value(RandomMessages.fill(MirrorGap.getDefaultInstance(), random, 2));
        };
    }

    @Override
    public String run(byte[] input) throws InvalidProtocolBufferException {
        MirrorStateRecord record;
        try {
            record = MirrorStateFormat.parse(input);
        } catch (IllegalArgumentException e) {
            return REFUSED + " IllegalArgumentException";
        }
        checkEquals(record, MirrorStateRecord.parseFrom(record.toByteArray()), "the record parsed again");
        return ACCEPTED + " " + record.getRecordCase();
    }
}
