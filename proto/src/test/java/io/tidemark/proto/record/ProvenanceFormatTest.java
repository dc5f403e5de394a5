package io.tidemark.proto.record;

import io.tidemark.proto.record.ProvenanceHeaders.Provenance;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Golden bytes of the provenance value, the values it refuses, and a seeded fuzz of both. */
class ProvenanceFormatTest {
    private static final HexFormat HEX = HexFormat.of();
    /** 2026-01-01T00:00:00Z. */
    private static final long RECEIVE_TIME_MS = 1_767_225_600_000L;
    private static final UUID ORDERS_ID = UUID.fromString("0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95");
    private static final String ORDERS_ID_HEX = "0e4f7c2a5b1d4e8f9a3c6d2b1f0a7e95";
    private static final UUID T_ID = new UUID(0x0102030405060708L, 0x090a0b0c0d0e0f10L);
    private static final String T_ID_HEX = "0102030405060708090a0b0c0d0e0f10";
    private static final Provenance FROM_A = new Provenance(new OriginPartition("A", "orders", ORDERS_ID, 0),
            1_000_000, RECEIVE_TIME_MS, List.of("A"));
    /** The golden value of {@link #FROM_A}, as the class comment draws it. */
    private static final String FROM_A_HEX = "02" + "0141" + "066f7264657273" + ORDERS_ID_HEX + "00" + "c0843d"
            + "80d0eab6b733" + "00";
    private static final String CLUSTER_CHARACTERS = "abcdefghijklmnopqrstuvwxyz" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
            + "0123456789._-";

    @Test
    void aOneHopValueHasTheGoldenBytes() {
        byte[] value = ProvenanceFormat.encode(FROM_A);
        assertEquals(FROM_A_HEX, HEX.formatHex(value));
        assertEquals(37, value.length);
        assertEquals(FROM_A, ProvenanceFormat.decode(value));
    }

    @Test
    void earlierClustersFollowTheOriginOldestFirst() {
        Provenance fromC = new Provenance(new OriginPartition("C", "t", T_ID, 130), 0, 0, List.of("A", "Bb", "C"));
        byte[] value = ProvenanceFormat.encode(fromC);
        assertEquals("02" + "0143" + "0174" + T_ID_HEX + "8201" + "00" + "00" + "02" + "0141" + "024262",
                HEX.formatHex(value));
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
        List<String> expected = new ArrayList<>(List.of(
                "malformed tidemark.origin value (0 bytes): version: the value is empty",
                "malformed tidemark.origin value (1 bytes): origin cluster: " + varint,
                "malformed tidemark.origin value (2 bytes): origin cluster: name of 1 bytes runs past the value end "
                        + "(0 bytes left)",
                "malformed tidemark.origin value (3 bytes): origin topic: " + varint));
        for (int length = 4; length < 10; length++) {
            expected.add("malformed tidemark.origin value (" + length + " bytes): origin topic: name of 6 bytes runs "
                    + "past the value end (" + (length - 4) + " bytes left)");
        }
        for (int length = 10; length < 26; length++) {
            expected.add("malformed tidemark.origin value (" + length + " bytes): origin topic id: id of 16 bytes runs "
                    + "past the value end (" + (length - 10) + " bytes left)");
        }
        expected.add("malformed tidemark.origin value (26 bytes): origin partition: " + varint);
        for (int length = 27; length < 30; length++) {
            expected.add("malformed tidemark.origin value (" + length + " bytes): origin offset: " + varint);
        }
        for (int length = 30; length < 36; length++) {
            expected.add("malformed tidemark.origin value (" + length + " bytes): origin ReceiveTime: " + varint);
        }
        expected.add("malformed tidemark.origin value (36 bytes): earlier cluster count: " + varint);
        assertEquals(expected, refusals);
    }

    @Test
    void anUnknownVersionIsRefused() {
        assertEquals("malformed tidemark.origin value (37 bytes): version: 3 is not known; this reader knows "
                + "version 2", refusal(HEX.parseHex("03" + FROM_A_HEX.substring(2))));
    }

    /** Version 1, before topic ids: the same without the id, as mirrors wrote it then. */
    @Test
    void version1IsNoLongerRead() {
        assertEquals("malformed tidemark.origin value (21 bytes): version: 1 is not read any more: it names no topic "
                + "id, and copies written before topic ids are not migrated; this reader knows version 2",
                refusal(HEX.parseHex("01" + "0141" + "066f7264657273" + "00" + "c0843d" + "80d0eab6b733" + "00")));
    }

    @Test
    void namesThatAreNotClusterNamesAreRefused() {
        String rule = "is not allowed: use 1 to 64 characters from a-z A-Z 0-9 . _ -";
        assertEquals("malformed tidemark.origin value (27 bytes): origin cluster: cluster name 'a,b' " + rule,
                refusal(HEX.parseHex("02" + "03612c62" + "0174" + T_ID_HEX + "00" + "00" + "00" + "00")));
        assertEquals("malformed tidemark.origin value (24 bytes): origin cluster: cluster name '' " + rule,
                refusal(HEX.parseHex("02" + "00" + "0174" + T_ID_HEX + "00" + "00" + "00" + "00")));
        assertEquals("malformed tidemark.origin value (89 bytes): origin cluster: cluster name '" + "a".repeat(65)
                + "' " + rule, refusal(HEX.parseHex("02" + "41" + "61".repeat(65) + "0174" + T_ID_HEX + "00" + "00"
                + "00" + "00")));
        assertEquals("malformed tidemark.origin value (30 bytes): earlier cluster 1 of 2: cluster name 'é' " + rule,
                refusal(HEX.parseHex("02" + "0141" + "0174" + T_ID_HEX + "00" + "00" + "00" + "02" + "0142"
                        + "02c3a9")));
    }

    @Test
    void anEmptyTopicBytesAfterThePathAndAnOffsetAboveTheLongRangeAreRefused() {
        assertEquals("malformed tidemark.origin value (24 bytes): origin topic: the name is empty",
                refusal(HEX.parseHex("02" + "0141" + "00" + T_ID_HEX + "00" + "00" + "00" + "00")));
        assertEquals("malformed tidemark.origin value (38 bytes): after the path: 1 bytes more; version 2 ends with "
                + "the path", refusal(HEX.parseHex(FROM_A_HEX + "00")));
        assertEquals("malformed tidemark.origin value (34 bytes): origin offset: varlong 18446744073709551615 is "
                + "above 9223372036854775807",
                refusal(HEX.parseHex("02" + "0141" + "0174" + T_ID_HEX + "00" + "ffffffffffffffffff01" + "00"
                        + "00")));
    }

    /** The format cannot say it: the origin cluster is written once, as the path's end. */
    @Test
    void aPathNotEndingWithTheOriginClusterCannotBeMade() {
        assertEquals("path [A, B] does not end with the origin cluster C", assertThrows(
                IllegalArgumentException.class, () -> new Provenance(new OriginPartition("C", "t", T_ID, 0), 1, 1,
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
                new UUID(random.nextLong(), random.nextLong()), random.nextInt(Integer.MAX_VALUE));
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
