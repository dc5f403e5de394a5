package io.tidemark.proto.record;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.ProvenanceHeaders.Provenance;
import io.tidemark.proto.record.RecordBatchValidator.SendTimeWindow;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class MirroredBatchScannerTest {
    private static final UUID ORDERS_ID = UUID.fromString("0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95");
    private static final String ORDERS_ID_HEX = "0e4f7c2a5b1d4e8f9a3c6d2b1f0a7e95";
    /** The id of {@code orders} deleted and created again. */
    private static final UUID RECREATED_ID = UUID.fromString("0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e96");
    private static final OriginPartition ORIGIN = new OriginPartition("A", "orders", ORDERS_ID, 3);
    /** A provenance header of {@link #ORIGIN} at a small offset: 1 + 15 bytes of name, 1 + 30 of value. */
    private static final int PROVENANCE_HEADER_BYTES = 47;

    private static ByteBuffer batch(List<List<Header>> headers) {
        RecordBatchBuilder builder = new RecordBatchBuilder().mirrored();
        headers.forEach(h -> builder.append(1, null, new byte[] {1}, h));
        return builder.build();
    }

    private static List<Header> copied(OriginPartition origin, long offset) {
        return ProvenanceHeaders.forCopy(List.of(new Header("user", new byte[] {1})), origin, offset, 10);
    }

    private static String refusal(ByteBuffer batch) {
        TidemarkException e = assertThrows(TidemarkException.class, () -> new MirroredBatchScanner().scan(batch, 0));
        assertEquals(ErrorCode.CORRUPT_BATCH, e.code());
        return e.getMessage();
    }

    @Test
    void originOffsetsMayHaveGapsButMustIncrease() {
        ByteBuffer batch = batch(List.of(copied(ORIGIN, 5), copied(ORIGIN, 6), copied(ORIGIN, 9)));
        assertEquals(new MirroredBatchScanner.OriginRange(ORIGIN, 5, 9, 3 * PROVENANCE_HEADER_BYTES),
                new MirroredBatchScanner().scan(batch, 0));
        assertEquals("corrupt mirrored batch: record 1 of 2 has origin offset 5, not above the previous record's 5; "
                + "origin offsets must increase in a mirrored batch",
                refusal(batch(List.of(copied(ORIGIN, 5), copied(ORIGIN, 5)))));
    }

    @Test
    void everyRecordNamesTheSameOriginPartition() {
        for (OriginPartition other : List.of(new OriginPartition("C", "orders", ORDERS_ID, 3),
                new OriginPartition("A", "order", ORDERS_ID, 3), new OriginPartition("A", "orders", ORDERS_ID, 4),
                new OriginPartition("A", "orders", RECREATED_ID, 3))) {
            assertEquals("corrupt mirrored batch: record 1 of 2 names another origin partition than record 0 "
                    + "(A:orders-3 (topic id 0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95)); a mirrored batch copies one "
                    + "origin partition", refusal(batch(List.of(copied(ORIGIN, 5), copied(other, 6)))));
        }
    }

    @Test
    void everyRecordCarriesProvenance() {
        assertEquals("corrupt mirrored batch: record 1 of 2 lacks the tidemark.origin header: every record of a "
                + "mirrored batch carries its provenance",
                refusal(batch(List.of(copied(ORIGIN, 5), List.of(new Header("user", new byte[0]))))));
    }

    @Test
    void malformedProvenanceIsRefusedNamingTheRecordAndTheField() {
        byte[] value = ProvenanceHeaders.encode(new Provenance(ORIGIN, 5, 10, List.of("A"))).value();
        assertEquals("corrupt mirrored batch: record 1 of 2: malformed tidemark.origin value (28 bytes): origin "
                + "ReceiveTime: varint runs past the value end",
                refusal(batch(List.of(copied(ORIGIN, 4), withProvenance(Arrays.copyOf(value, 28))))));
        assertEquals("corrupt mirrored batch: record 1 of 2: malformed tidemark.origin value (20 bytes): origin "
                + "topic id: id of 16 bytes runs past the value end (10 bytes left)",
                refusal(batch(List.of(copied(ORIGIN, 4), withProvenance(Arrays.copyOf(value, 20))))));
        value[0] = 9;
        assertEquals("corrupt mirrored batch: record 0 of 1: malformed tidemark.origin value (30 bytes): version: 9 "
                + "is not known; this reader knows version 2", refusal(batch(List.of(withProvenance(value)))));
    }

    @Test
    void aBadClusterNameIsRefused() {
        byte[] commaInName = HexFormat.of().parseHex("02" + "03612c62" + "066f7264657273" + ORDERS_ID_HEX + "03"
                + "05" + "0a" + "00");
        assertEquals("corrupt mirrored batch: record 0 of 1: malformed tidemark.origin value (32 bytes): origin "
                + "cluster: cluster name 'a,b' is not allowed: use 1 to 64 characters from a-z A-Z 0-9 . _ -",
                refusal(batch(List.of(withProvenance(commaInName)))));
        byte[] badEarlier = HexFormat.of().parseHex("02" + "0141" + "066f7264657273" + ORDERS_ID_HEX + "03" + "05"
                + "0a" + "01" + "0120");
        assertEquals("corrupt mirrored batch: record 0 of 1: malformed tidemark.origin value (32 bytes): earlier "
                + "cluster 0 of 1: cluster name ' ' is not allowed: use 1 to 64 characters from a-z A-Z 0-9 . _ -",
                refusal(batch(List.of(withProvenance(badEarlier)))));
    }

    @Test
    void theLastProvenanceHeaderOfARecordCounts() {
        List<Header> twice = new ArrayList<>(copied(new OriginPartition("C", "orders", ORDERS_ID, 3), 1));
        twice.add(ProvenanceHeaders.encode(new Provenance(ORIGIN, 5, 10, List.of("A"))));
        assertEquals(new MirroredBatchScanner.OriginRange(ORIGIN, 5, 5, 2 * PROVENANCE_HEADER_BYTES),
                new MirroredBatchScanner().scan(batch(List.of(twice)), 0), "both headers' bytes count");
    }

    /**
     * The provenance bytes are exactly what the copy takes more than the same records without provenance, also when
     * the header lengthens a record's length varint (a value of 90 bytes: 97 to 128 bytes) or its header count
     * varint (127 user headers: 127 to 128).
     */
    @Test
    void theProvenanceBytesAreWhatTheHeadersAddToTheBatch() {
        List<Header> many = new ArrayList<>();
        for (int i = 0; i < 127; i++) {
            many.add(new Header("h", new byte[0]));
        }
        for (int valueBytes : new int[] {0, 89, 90, 91, 1000, 16_300, 16_400}) {
            for (List<Header> user : List.of(List.<Header>of(), many)) {
                RecordBatchBuilder plain = new RecordBatchBuilder();
                RecordBatchBuilder copy = new RecordBatchBuilder().mirrored();
                for (int offset = 0; offset < 3; offset++) {
                    plain.append(1, new byte[] {1}, new byte[valueBytes], user);
                    copy.append(1, new byte[] {1}, new byte[valueBytes],
                            ProvenanceHeaders.forCopy(user, ORIGIN, offset, 10));
                }
                ByteBuffer copied = copy.build();
                int added = copied.remaining() - plain.build().remaining();
                assertEquals(added, new MirroredBatchScanner().scan(copied, 0).provenanceBytes(),
                        valueBytes + "-byte values, " + user.size() + " user headers");
            }
        }
    }

    @Test
    void sendTimesAreHeldToTheWindowAroundEachRecordsOriginReceiveTime() {
        long originReceiveTimeMs = 1_000_000;
        RecordBatchBuilder builder = new RecordBatchBuilder().mirrored();
        builder.append(originReceiveTimeMs - 600_000, null, new byte[] {1},
                ProvenanceHeaders.forCopy(List.of(), ORIGIN, 5, originReceiveTimeMs));
        builder.append(originReceiveTimeMs + 1 - 600_001, null, new byte[] {1},
                ProvenanceHeaders.forCopy(List.of(), ORIGIN, 6, originReceiveTimeMs + 1));
        ByteBuffer batch = builder.build();
        SendTimeWindow tenMinutesBefore = SendTimeWindow.around(9_000_000_000L, -1, 600_000);
        assertEquals(5, new MirroredBatchScanner().scan(batch, 0, SendTimeWindow.around(9_000_000_000L, -1, 600_001))
                .firstOriginOffset(), "the window's own ReceiveTime, far later, plays no part");
        TidemarkException late = assertThrows(TidemarkException.class,
                () -> new MirroredBatchScanner().scan(batch, 0, tenMinutesBefore));
        assertEquals(ErrorCode.INVALID_TIMESTAMP, late.code());
        assertEquals("record 1 of the batch has SendTime 400000 (1970-01-01T00:06:40Z), outside the allowed range "
                + "[400001, 9223372036854775807] = origin ReceiveTime 1000001 - send.time.before.max.ms 600000 .. + "
                + "send.time.after.max.ms (unlimited); the whole batch was rejected", late.getMessage());
    }

    /** A record with a user header and {@code value} as its provenance header. */
    private static List<Header> withProvenance(byte[] value) {
        return List.of(new Header("user", new byte[] {1}), new Header(ProvenanceHeaders.NAME, value));
    }
}
