package io.tidemark.proto.record;

import io.tidemark.proto.record.ProvenanceHeaders.Provenance;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The rules of a copy, the display of provenance, golden bytes of a mirrored batch and what a copy costs. */
class ProvenanceHeadersTest {
    private static final UUID T_ID = UUID.fromString("6f1c2a3b-4d5e-4f60-8172-8394a5b6c7d8");
    private static final String T_ID_HEX = "6f1c2a3b4d5e4f6081728394a5b6c7d8";
    private static final UUID ORDERS_ID = UUID.fromString("0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95");
    private static final OriginPartition ORIGIN = new OriginPartition("A", "t", T_ID, 2);

    @Test
    void aCopyKeepsItsHeadersAndGetsOneProvenanceHeader() {
        List<Header> headers = ProvenanceHeaders.forCopy(List.of(new Header("h", new byte[] {9})), ORIGIN, 300,
                1_700_000_000_000L);
        assertEquals(List.of(new Header("h", new byte[] {9}),
                new Header("tidemark.origin", HexFormat.of().parseHex("02" + "0141" + "0174" + T_ID_HEX + "02"
                        + "ac02" + "80d095ffbc31" + "00"))), headers);
    }

    @Test
    void aSecondHopReplacesTheOriginAndExtendsThePath() {
        List<Header> own = List.of(new Header("x", new byte[] {1}), new Header("y", new byte[] {2}));
        List<Header> onB = ProvenanceHeaders.forCopy(own, ORIGIN, 300, 1000);
        List<Header> onC = ProvenanceHeaders.forCopy(onB, new OriginPartition("B", "A.t", ORDERS_ID, 2), 17, 2000);
        assertEquals(List.of("x", "y", "tidemark.origin"), onC.stream().map(Header::name).toList());
        assertEquals(own, onC.subList(0, 2));
        assertEquals(Optional.of(new Provenance(new OriginPartition("B", "A.t", ORDERS_ID, 2), 17, 2000,
                        List.of("A", "B"))),
                ProvenanceHeaders.read(onC));
        assertEquals(List.of("A", "B"), ProvenanceHeaders.path(onC));
        assertTrue(ProvenanceHeaders.crossed(onC, "A"));
        assertTrue(ProvenanceHeaders.crossed(onC, "B"));
        assertFalse(ProvenanceHeaders.crossed(onC, "C"));
    }

    @Test
    void everyHeaderWithTheReservedNameIsDroppedByACopy() {
        Header fromA = ProvenanceHeaders.encode(new Provenance(ORIGIN, 1, 1, List.of("A")));
        Header fromB = ProvenanceHeaders.encode(new Provenance(new OriginPartition("B", "t", T_ID, 0), 5, 5,
                List.of("B")));
        List<Header> copy = ProvenanceHeaders.forCopy(List.of(fromA, new Header("x", new byte[0]), fromB),
                new OriginPartition("C", "t", T_ID, 0), 9, 9);
        assertEquals(List.of(new Header("x", new byte[0]), ProvenanceHeaders.encode(new Provenance(
                new OriginPartition("C", "t", T_ID, 0), 9, 9, List.of("B", "C")))), copy,
                "the last one's path extended");
        assertTrue(ProvenanceHeaders.reserved("tidemark.origin"));
        assertFalse(ProvenanceHeaders.reserved("tidemark.origin.cluster"));
    }

    @Test
    void provenanceDisplaysAsItsFieldsAndOtherValuesAsText() {
        List<Header> headers = ProvenanceHeaders.forCopy(List.of(new Header("h", "x".getBytes(UTF_8))), ORIGIN, 300,
                1_700_000_000_000L);
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("cluster", "A");
        fields.put("topic", "t");
        fields.put("topicId", "6f1c2a3b-4d5e-4f60-8172-8394a5b6c7d8");
        fields.put("partition", 2);
        fields.put("offset", 300L);
        fields.put("receiveTime", 1_700_000_000_000L);
        fields.put("path", List.of("A"));
        assertEquals(List.of("x", fields), headers.stream().map(ProvenanceHeaders::displayValue).toList());
        assertEquals("{cluster=A, topic=t, topicId=6f1c2a3b-4d5e-4f60-8172-8394a5b6c7d8, partition=2, offset=300, "
                + "receiveTime=1700000000000, path=[A]}", ProvenanceHeaders.displayValue(headers.get(1)).toString());
        assertEquals("malformed tidemark.origin value (2 bytes): version: 3 is not known; this reader knows version "
                + "2; bytes 0301", ProvenanceHeaders.displayValue(new Header("tidemark.origin", new byte[] {3, 1})));
    }

    @Test
    void aRecordNeverCopiedHasNoProvenanceAndAnEmptyPath() {
        List<Header> headers = List.of(new Header("x", new byte[0]));
        assertEquals(Optional.empty(), ProvenanceHeaders.read(headers));
        assertEquals(List.of(), ProvenanceHeaders.path(headers));
        assertFalse(ProvenanceHeaders.crossed(headers, "A"));
    }

    @Test
    void malformedProvenanceIsRefused() {
        List<Header> truncated = List.of(new Header("tidemark.origin", new byte[] {2}));
        assertEquals("malformed tidemark.origin value (1 bytes): origin cluster: varint runs past the value end",
                assertThrows(IllegalArgumentException.class, () -> ProvenanceHeaders.read(truncated)).getMessage());
        assertEquals("origin ReceiveTime -1 is negative; it is ms since the epoch", assertThrows(
                IllegalArgumentException.class, () -> ProvenanceHeaders.forCopy(List.of(), ORIGIN, 0, -1))
                .getMessage());
    }

    @Test
    void aProducersMalformedProvenanceHeaderCountsAsNoneAndIsReplacedByTheCopys() {
        List<Header> spoofed = List.of(new Header("h", new byte[] {9}), new Header("tidemark.origin", new byte[] {2}));
        assertEquals(List.of(), ProvenanceHeaders.path(spoofed));
        assertEquals(false, ProvenanceHeaders.crossed(spoofed, "B"));
        List<Header> copy = ProvenanceHeaders.forCopy(spoofed, ORIGIN, 300, 1000);
        assertEquals(List.of("h", "tidemark.origin"), copy.stream().map(Header::name).toList());
        assertEquals(Optional.of(new Provenance(ORIGIN, 300, 1000, List.of("A"))), ProvenanceHeaders.read(copy));
    }

    /** A mirrored batch of two copied records: the golden bytes of the whole batch. */
    @Test
    void mirroredBatchGoldenBytes() {
        ByteBuffer batch = new RecordBatchBuilder().mirrored()
                .append(5, null, "v".getBytes(UTF_8), ProvenanceHeaders.forCopy(List.of(), ORIGIN, 7, 6))
                .append(5, null, null, ProvenanceHeaders.forCopy(List.of(), ORIGIN, 9, 6))
                .build();
        String hex = HexFormat.of().formatHex(batch.array(), 0, batch.limit());
        assertEquals("40", hex.substring(2 * RecordBatchFormat.ATTRIBUTES_OFFSET,
                2 * RecordBatchFormat.ATTRIBUTES_OFFSET + 2), "attributes: mirrored");
        String records = String.join("",
                "30", // length: 48 bytes follow
                "00", "00", "01", "0276", "01", // delta 0, SendTime delta 0, null key, value "v", 1 header
                "0f", hexOf("tidemark.origin"), "19", "02" + "0141" + "0174" + T_ID_HEX + "02" + "07" + "06" + "00",
                "2f", // length: 47 bytes follow
                "01", "00", "01", "01", "01", // delta 1, SendTime delta 0, null key, null value, 1 header
                "0f", hexOf("tidemark.origin"), "19", "02" + "0141" + "0174" + T_ID_HEX + "02" + "09" + "06" + "00");
        assertEquals(RecordBatchFormat.RECORDS_OFFSET + 49 + 48, batch.limit());
        assertEquals(records, hex.substring(2 * RecordBatchFormat.RECORDS_OFFSET));
        assertEquals(new MirroredBatchScanner.OriginRange(ORIGIN, 7, 9, 2 * 42),
                new MirroredBatchScanner().scan(batch, 0),
                "each record's provenance header takes 42 bytes (name and value with their lengths)");
    }

    /**
     * What a copy costs: a record of topic {@code orders} copied from cluster A into cluster B (offset 1,000,000,
     * ReceiveTime 2026-01-01), as the bytes it takes in a batch: 54 bytes of header (37 of value, 16 of them the
     * topic id). The six spelled-out headers of the first layout took 280 and 1,204 bytes: 173 and 172 more.
     */
    @Test
    void aCopyTakes54Or55BytesMoreThanItsRecord() {
        OriginPartition orders = new OriginPartition("A", "orders", ORDERS_ID, 0);
        List<Header> provenance = ProvenanceHeaders.forCopy(List.of(), orders, 1_000_000, 1_767_225_600_000L);
        assertEquals(54, 1 + ProvenanceHeaders.NAME.length() + 1 + provenance.get(0).value().length,
                "the header: name length, name, value length, value");
        assertEquals(107, recordBytes(new byte[100], List.of()));
        assertEquals(162, recordBytes(new byte[100], provenance), "54 bytes of header, 1 more of record length");
        assertEquals(1032, recordBytes(new byte[1024], List.of()));
        assertEquals(1086, recordBytes(new byte[1024], provenance));
        List<Header> secondHop = ProvenanceHeaders.forCopy(provenance, new OriginPartition("B", "orders", ORDERS_ID,
                0), 1_000_000, 1_767_225_600_000L);
        assertEquals(1088, recordBytes(new byte[1024], secondHop), "an earlier cluster of one letter takes 2 bytes");
    }

    /** The bytes a record with a null key takes in a batch. */
    private static int recordBytes(byte[] value, List<Header> headers) {
        return new RecordBatchBuilder().append(0, null, value, headers).sizeInBytes()
                - RecordBatchFormat.HEADER_SIZE_BYTES;
    }

    private static String hexOf(String text) {
        return HexFormat.of().formatHex(text.getBytes(UTF_8));
    }
}
