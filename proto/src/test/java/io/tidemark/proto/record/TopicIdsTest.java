package io.tidemark.proto.record;

import com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HexFormat;
import java.util.Optional;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Golden bytes of a topic id, and the lengths that are not one. */
class TopicIdsTest {
    private static final UUID ID = UUID.fromString("0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95");
    private static final String ID_HEX = "0e4f7c2a5b1d4e8f9a3c6d2b1f0a7e95";

    @Test
    void anIdIsItsSixteenBytesInTheOrderOfItsText() {
        ByteString bytes = TopicIds.toBytes(ID);
        assertEquals(ID_HEX, HexFormat.of().formatHex(bytes.toByteArray()));
        assertEquals(ID, TopicIds.fromBytes(bytes));
        assertEquals(Optional.of(ID), TopicIds.optional(bytes));
    }

    @Test
    void aLittleEndianBufferStillHoldsTheBigEndianBytes() {
        ByteBuffer buffer = ByteBuffer.allocate(18).order(ByteOrder.LITTLE_ENDIAN);
        TopicIds.write(buffer, 1, ID);
        assertEquals("00" + ID_HEX + "00", HexFormat.of().formatHex(buffer.array()));
        assertEquals(ID, TopicIds.read(buffer, 1));
        assertEquals(0, buffer.position());
    }

    @Test
    void emptyBytesAreNoIdAndOtherLengthsAreRefused() {
        assertEquals(Optional.empty(), TopicIds.optional(ByteString.EMPTY));
        assertEquals("a topic id of 15 bytes is not one: a topic id is 16 bytes, a UUID's most significant 8 bytes "
                + "then its least significant 8, big-endian", assertThrows(IllegalArgumentException.class,
                () -> TopicIds.fromBytes(ByteString.copyFrom(new byte[15]))).getMessage());
        assertEquals("a topic id of 0 bytes is not one: a topic id is 16 bytes, a UUID's most significant 8 bytes "
                + "then its least significant 8, big-endian", assertThrows(IllegalArgumentException.class,
                () -> TopicIds.fromBytes(ByteString.EMPTY)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> TopicIds.optional(ByteString.copyFrom(new byte[17])));
    }
}
