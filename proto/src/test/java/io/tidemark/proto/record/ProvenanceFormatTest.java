package io.tidemark.proto.record;

import io.tidemark.proto.record.ProvenanceHeaders.Provenance;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Golden bytes of the provenance value, the values it refuses, and a seeded fuzz of both. */
class ProvenanceFormatTest {
    private static final HexFormat HEX = HexFormat.of();
    /** 2026-01-01T00:00:00Z. */
    private static final long RECEIVE_TIME_MS = 1_767_225_600_000L;
    private static final Provenance FROM_A = new Provenance(new OriginPartition("A", "orders", 0), 1_000_000,
            RECEIVE_TIME_MS, List.of("A"));
    /** The golden value of {@link #FROM_A}, as the class comment draws it. */
    private static final String FROM_A_HEX = "01" + "0141" + "066f7264657273" + "00" + "c0843d" + "80d0eab6b733"
            + "00";
    private static final String CLUSTER_CHARACTERS = "abcdefghijklmnopqrstuvwxyz" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
            + "0123456789._-";

    @Test
    void aOneHopValueHasTheGoldenBytes() {
        byte[] value = ProvenanceFormat.encode(FROM_A);
        assertEquals(FROM_A_HEX, HEX.formatHex(value));
        assertEquals(21, value.length);
        assertEquals(FROM_A, ProvenanceFormat.decode(value));
    }

    @Test
    void earlierClustersFollowTheOriginOldestFirst() {
        Provenance fromC = new Provenance(new OriginPartition("C", "t", 130), 0, 0, List.of("A", "Bb", "C"));
        byte[] value = ProvenanceFormat.encode(fromC);
        assertEquals("01" + "0143" + "0174" + "8201" + "00" + "00" + "02" + "0141" + "024262", HEX.formatHex(value));
        assertEquals(fromC, ProvenanceFormat.decode(value));
    }

    @Test
    void everyTruncationIsRefusedNamingTheField() {
        byte[] value = HEX.parseHex(FROM_A_HEX);
        List<String> refusals = new ArrayList<>();
        for (int length = 0; length < value.length; length++) {
            refusals.add(refusal(Arrays.copyOf(value, length)));
        }
        String varint = "varint runs past the value end";
        assertEquals(List.of(
                "malformed tidemark.origin value (0 bytes): version: the value is empty",
                "malformed tidemark.origin value (1 bytes): origin cluster: " + varint,
                "malformed tidemark.origin value (2 bytes): origin cluster: name of 1 bytes runs past the value end "
                        + "(0 bytes left)",
                "malformed tidemark.origin value (3 bytes): origin topic: " + varint,
                "malformed tidemark.origin value (4 bytes): origin topic: name of 6 bytes runs past the value end "
                        + "(0 bytes left)",
                "malformed tidemark.origin value (5 bytes): origin topic: name of 6 bytes runs past the value end "
                        + "(1 bytes left)",
                "malformed tidemark.origin value (6 bytes): origin topic: name of 6 bytes runs past the value end "
                        + "(2 bytes left)",
                "malformed tidemark.origin value (7 bytes): origin topic: name of 6 bytes runs past the value end "
                        + "(3 bytes left)",
                "malformed tidemark.origin value (8 bytes): origin topic: name of 6 bytes runs past the value end "
                        + "(4 bytes left)",
                "malformed tidemark.origin value (9 bytes): origin topic: name of 6 bytes runs past the value end "
                        + "(5 bytes left)",
                "malformed tidemark.origin value (10 bytes): origin partition: " + varint,
                "malformed tidemark.origin value (11 bytes): origin offset: " + varint,
                "malformed tidemark.origin value (12 bytes): origin offset: " + varint,
                "malformed tidemark.origin value (13 bytes): origin offset: " + varint,
                "malformed tidemark.origin value (14 bytes): origin ReceiveTime: " + varint,
                "malformed tidemark.origin value (15 bytes): origin ReceiveTime: " + varint,
                "malformed tidemark.origin value (16 bytes): origin ReceiveTime: " + varint,
                "malformed tidemark.origin value (17 bytes): origin ReceiveTime: " + varint,
                "malformed tidemark.origin value (18 bytes): origin ReceiveTime: " + varint,
                "malformed tidemark.origin value (19 bytes): origin ReceiveTime: " + varint,
                "malformed tidemark.origin value (20 bytes): earlier cluster count: " + varint), refusals);
    }

    @Test
    void anUnknownVersionIsRefused() {
        assertEquals("malformed tidemark.origin value (21 bytes): version: 2 is not known; this reader knows "
                + "version 1", refusal(HEX.parseHex("02" + FROM_A_HEX.substring(2))));
    }

    @Test
    void namesThatAreNotClusterNamesAreRefused() {
        String rule = "is not allowed: use 1 to 64 characters from a-z A-Z 0-9 . _ -";
        assertEquals("malformed tidemark.origin value (11 bytes): origin cluster: cluster name 'a,b' " + rule,
                refusal(HEX.parseHex("01" + "03612c62" + "0174" + "00" + "00" + "00" + "00")));
        assertEquals("malformed tidemark.origin value (8 bytes): origin cluster: cluster name '' " + rule,
                refusal(HEX.parseHex("01" + "00" + "0174" + "00" + "00" + "00" + "00")));
        assertEquals("malformed tidemark.origin value (73 bytes): origin cluster: cluster name '" + "a".repeat(65)
                + "' " + rule, refusal(HEX.parseHex("01" + "41" + "61".repeat(65) + "0174" + "00" + "00" + "00"
                + "00")));
        assertEquals("malformed tidemark.origin value (14 bytes): earlier cluster 1 of 2: cluster name 'é' " + rule,
                refusal(HEX.parseHex("01" + "0141" + "0174" + "00" + "00" + "00" + "02" + "0142" + "02c3a9")));
    }

    @Test
    void anEmptyTopicBytesAfterThePathAndAnOffsetAboveTheLongRangeAreRefused() {
        assertEquals("malformed tidemark.origin value (8 bytes): origin topic: the name is empty",
                refusal(HEX.parseHex("01" + "0141" + "00" + "00" + "00" + "00" + "00")));
        assertEquals("malformed tidemark.origin value (22 bytes): after the path: 1 bytes more; version 1 ends with "
                + "the path", refusal(HEX.parseHex(FROM_A_HEX + "00")));
        assertEquals("malformed tidemark.origin value (18 bytes): origin offset: varlong 18446744073709551615 is "
                + "above 9223372036854775807",
                refusal(HEX.parseHex("01" + "0141" + "0174" + "00" + "ffffffffffffffffff01" + "00" + "00")));
    }

    /** The format cannot say it: the origin cluster is written once, as the path's end. */
    @Test
    void aPathNotEndingWithTheOriginClusterCannotBeMade() {
        assertEquals("path [A, B] does not end with the origin cluster C", assertThrows(
                IllegalArgumentException.class, () -> new Provenance(new OriginPartition("C", "t", 0), 1, 1,
                        List.of("A", "B"))).getMessage());
    }

    @Test
    void randomProvenancesRoundTripAndDamagedValuesDecodeOrAreRefused() {
        Random random = new Random(20261130);
        for (int i = 0; i < 2000; i++) {
            Provenance provenance = randomProvenance(random);
            byte[] value = ProvenanceFormat.encode(provenance);
            assertEquals(provenance, ProvenanceFormat.decode(value));
            value[random.nextInt(value.length)] = (byte) random.nextInt(256);
            Provenance damaged;
            try {
                damaged = ProvenanceFormat.decode(value);
            } catch (IllegalArgumentException refused) {
                assertEquals("malformed tidemark.origin value (" + value.length + " bytes): ",
                        refused.getMessage().substring(0, refused.getMessage().indexOf(':') + 2));
                continue;
            }
            assertEquals(damaged, ProvenanceFormat.decode(ProvenanceFormat.encode(damaged)));
        }
    }

    private static Provenance randomProvenance(Random random) {
        List<String> path = new ArrayList<>();
        for (int hops = random.nextInt(4); hops >= 0; hops--) {
            path.add(randomName(random, CLUSTER_CHARACTERS,
                    1 + random.nextInt(OriginPartition.CLUSTER_NAME_LENGTH_MAX)));
        }
        OriginPartition origin = new OriginPartition(path.get(path.size() - 1),
                randomName(random, CLUSTER_CHARACTERS + "é→", 1 + random.nextInt(200)),
                random.nextInt(Integer.MAX_VALUE));
        return new Provenance(origin, random.nextLong() >>> (1 + random.nextInt(63)),
                random.nextLong() >>> (1 + random.nextInt(63)), path);
    }

    private static String randomName(Random random, String characters, int length) {
        StringBuilder name = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            name.append(characters.charAt(random.nextInt(characters.length())));
        }
        return name.toString();
    }

    private static String refusal(byte[] value) {
        return assertThrows(IllegalArgumentException.class, () -> ProvenanceFormat.decode(value)).getMessage();
    }
}
