package io.tidemark.proto.record;

import io.tidemark.proto.record.ProvenanceHeaders.Provenance;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Golden bytes of the provenance headers, and the rules of a copy. */
class ProvenanceHeadersTest {
    private static final OriginPartition ORIGIN = new OriginPartition("A", "t", 2);

    @Test
    void headersOfACopyHaveTheGoldenBytes() {
        List<Header> headers = ProvenanceHeaders.forCopy(List.of(new Header("h", new byte[] {9})), ORIGIN, 300,
                1_700_000_000_000L);
        assertEquals(List.of("h", "tidemark.origin.cluster", "tidemark.origin.topic", "tidemark.origin.partition",
                "tidemark.origin.offset", "tidemark.origin.receive-time", "tidemark.path"),
                headers.stream().map(Header::name).toList());
        HexFormat hex = HexFormat.of();
        assertEquals("09", hex.formatHex(headers.get(0).value()));
        assertEquals("41", hex.formatHex(headers.get(1).value()));
        assertEquals("74", hex.formatHex(headers.get(2).value()));
        assertEquals("00000002", hex.formatHex(headers.get(3).value()));
        assertEquals("000000000000012c", hex.formatHex(headers.get(4).value()));
        assertEquals("0000018bcfe56800", hex.formatHex(headers.get(5).value()));
        assertEquals("41", hex.formatHex(headers.get(6).value()));
    }

    @Test
    void aSecondHopReplacesTheOriginAndExtendsThePath() {
        List<Header> onB = ProvenanceHeaders.forCopy(List.of(), ORIGIN, 300, 1000);
        List<Header> onC = ProvenanceHeaders.forCopy(onB, new OriginPartition("B", "A.t", 2), 17, 2000);
        assertEquals(6, onC.size());
        assertEquals(Optional.of(new Provenance(new OriginPartition("B", "A.t", 2), 17, 2000, List.of("A", "B"))),
                ProvenanceHeaders.read(onC));
        assertEquals("A,B", new String(onC.get(5).value(), UTF_8));
        assertTrue(ProvenanceHeaders.crossed(onC, "A"));
        assertTrue(ProvenanceHeaders.crossed(onC, "B"));
        assertFalse(ProvenanceHeaders.crossed(onC, "C"));
    }

    @Test
    void valuesDisplayAsTextWithNumbersInDecimal() {
        List<Header> headers = ProvenanceHeaders.forCopy(List.of(new Header("h", "x".getBytes(UTF_8))), ORIGIN, 300,
                1_700_000_000_000L);
        assertEquals(List.of("x", "A", "t", "2", "300", "1700000000000", "A"),
                headers.stream().map(ProvenanceHeaders::displayValue).toList());
    }

    @Test
    void aRecordNeverCopiedHasNoProvenanceAndAnEmptyPath() {
        List<Header> headers = List.of(new Header("x", new byte[0]));
        assertEquals(Optional.empty(), ProvenanceHeaders.read(headers));
        assertEquals(List.of(), ProvenanceHeaders.path(headers));
        assertFalse(ProvenanceHeaders.crossed(headers, "A"));
    }

    @Test
    void partialOrMalformedProvenanceIsRefused() {
        List<Header> full = ProvenanceHeaders.forCopy(List.of(), ORIGIN, 1, 1);
        IllegalArgumentException partial = assertThrows(IllegalArgumentException.class,
                () -> ProvenanceHeaders.read(full.subList(0, 3)));
        assertTrue(partial.getMessage().startsWith("a record carries some provenance headers but not all five"));
        List<Header> shortOffset = new java.util.ArrayList<>(full);
        shortOffset.set(3, new Header(ProvenanceHeaders.ORIGIN_OFFSET, new byte[] {1}));
        assertEquals("header tidemark.origin.offset has 1 bytes, not 8", assertThrows(IllegalArgumentException.class,
                () -> ProvenanceHeaders.read(shortOffset)).getMessage());
    }

    @Test
    void clusterNamesAreCheckedSoAPathJoinsUnambiguously() {
        assertEquals("cluster name 'a,b' is not allowed: use 1 to 64 characters from a-z A-Z 0-9 . _ -",
                assertThrows(IllegalArgumentException.class, () -> new OriginPartition("a,b", "t", 0)).getMessage());
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
        String record0 = String.join("",
                "ad01", // length: 173 bytes follow
                "00", "00", "01", "0276", "06", // delta 0, SendTime delta 0, null key, value "v", 6 headers
                "17", hexOf("tidemark.origin.cluster"), "01", "41",
                "15", hexOf("tidemark.origin.topic"), "01", "74",
                "19", hexOf("tidemark.origin.partition"), "04", "00000002",
                "16", hexOf("tidemark.origin.offset"), "08", "0000000000000007",
                "1c", hexOf("tidemark.origin.receive-time"), "08", "0000000000000006",
                "0d", hexOf("tidemark.path"), "01", "41");
        int recordsAt = 2 * RecordBatchFormat.RECORDS_OFFSET;
        assertEquals(record0, hex.substring(recordsAt, recordsAt + record0.length()));
        assertEquals(new MirroredBatchScanner.OriginRange(ORIGIN, 7, 9), new MirroredBatchScanner().scan(batch, 0));
    }

    private static String hexOf(String text) {
        return HexFormat.of().formatHex(text.getBytes(UTF_8));
    }
}
