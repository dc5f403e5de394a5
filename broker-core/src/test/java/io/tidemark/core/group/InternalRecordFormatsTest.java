package io.tidemark.core.group;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The fuzzer's findings in the readers of {@code __group_offsets} records (InternalRecordsFuzzTest, seed 20261205):
 * bytes that end inside a field, or a length past the bytes, are refused with the IllegalStateException the replay
 * skips a record for, not a buffer's exception, and no string is allocated at the length a record claims.
 */
class InternalRecordFormatsTest {
    /** Input 0 of the offset commits: a key whose group length (0x6772) runs past its 37 bytes. */
    @Test
    void anOffsetCommitKeyShorterThanItsGroupIsRefused() {
        byte[] key = HexFormat.of().parseHex("0001677280808080806974682d612d6c6f6e6765722d6e61722d6e616d652e7632"
                + "00007a30");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> OffsetCommitFormat.readKey(key));
        assertEquals("offset commit key holds a string of 26482 bytes where 33 are left", e.getMessage());
    }

    /** A value whose metadata claims 2^31 - 1 bytes: it allocated them before reading (OutOfMemoryError). */
    @Test
    void anOffsetCommitValueIsNotAllocatedAtTheLengthItClaims() {
        byte[] value = ByteBuffer.allocate(24).putShort((short) 1).putLong(5).putLong(1_700_000_000_000L)
                .putInt(Integer.MAX_VALUE).array();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> OffsetCommitFormat.readValue(value));
        assertEquals("offset commit value holds a string of 2147483647 bytes where 2 are left", e.getMessage());
        IllegalStateException cut = assertThrows(IllegalStateException.class,
                () -> OffsetCommitFormat.readValue(new byte[] {0, 1, 0, 0}));
        assertEquals("offset commit value of 4 bytes ends inside a field", cut.getMessage());
    }

    /** Input 14 of the group states: a key announcing a group of 4 bytes, holding 2. */
    @Test
    void aGroupStateKeyShorterThanItsGroupIsRefused() {
        byte[] key = HexFormat.of().parseHex("000200043437");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> GroupStateFormat.readGroup(key));
        assertEquals("group state key of 6 bytes announces a group of 4 bytes", e.getMessage());
        assertThrows(IllegalStateException.class, () -> GroupStateFormat.readValue(new byte[] {0}));
    }
}
