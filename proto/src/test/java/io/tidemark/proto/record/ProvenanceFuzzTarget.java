package io.tidemark.proto.record;

import io.tidemark.proto.fuzz.BatchGenerator;
import io.tidemark.proto.fuzz.FuzzTarget;
import io.tidemark.proto.record.ProvenanceHeaders.Provenance;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static io.tidemark.proto.fuzz.FuzzFailure.check;
import static io.tidemark.proto.fuzz.FuzzFailure.checkEquals;

/**
 * Provenance values ({@link ProvenanceFormat}) read two ways: {@link ProvenanceFormat#decode}, which documents an
 * {@link IllegalArgumentException} naming the field, and the broker's in-place {@link ProvenanceDecoder#wrap} on the
 * value lying inside a larger buffer (as in a record), which documents a {@link RecordFormatException}. Both must
 * agree, read nothing past the value, and an accepted value must encode again to the same provenance, in no more
 * bytes (a varint may be written longer than it needs).
 *
 * <p>Not thread-safe.
 */
public final class ProvenanceFuzzTarget implements FuzzTarget {
    private final BatchGenerator batches = new BatchGenerator(RecordBatchValidatorFuzzTarget.NOW_MS);
    private final ProvenanceDecoder decoder = new ProvenanceDecoder();

    @Override
    public String name() {
        return "provenance";
    }

    @Override
    public byte[] valid(SplittableRandom random, StringBuilder how) {
        OriginPartition origin = batches.origin(random);
        List<String> path = new ArrayList<>();
        int earlier = random.nextInt(4) == 0 ? random.nextInt(4) : 0;
        for (int i = 0; i < earlier; i++) {
            path.add(batches.origin(random).cluster());
        }
        path.add(origin.cluster());
        Provenance provenance = new Provenance(origin, random.nextBoolean() ? random.nextLong(0, 1_000_000)
                : random.nextLong(0, Long.MAX_VALUE), random.nextLong(0, Long.MAX_VALUE), path);
        how.append("provenance ").append(provenance);
        return ProvenanceFormat.encode(provenance);
    }

    @Override
    public String run(byte[] input) {
        Provenance provenance = null;
        String refusal = null;
        try {
            provenance = ProvenanceFormat.decode(input);
        } catch (IllegalArgumentException e) {
            check(e.getMessage().startsWith("malformed " + ProvenanceHeaders.NAME + " value"), "an unnamed refusal: "
                    + e.getMessage());
            refusal = e.getMessage();
        }
        ByteBuffer record = ByteBuffer.allocate(input.length + 10);
        record.position(3).put(input).put(new byte[] {2, 1, 'A', 0, 0, 0, 0});
        try {
            decoder.wrap(record, 3, input.length);
            check(refusal == null, "the decoder in place took a value decode() refuses: " + refusal);
            checkEquals(provenance, decoder.provenance(), "the provenance read in place");
        } catch (RecordFormatException e) {
            checkEquals(refusal, e.getMessage(), "the refusal in place");
        }
        if (provenance == null) {
            return REFUSED + " IllegalArgumentException";
        }
        byte[] again = ProvenanceFormat.encode(provenance);
        checkEquals(provenance, ProvenanceFormat.decode(again), "the provenance encoded again");
        return ACCEPTED;
    }
}
