package io.tidemark.proto.record;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

class RecordDigestFormatTest {
    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aRecordIsWrittenAsTheGridSays() {
        Record record = new Record(7, 0x0102, 0x0304, utf8("k"), utf8("vv"), List.of(new Header("h", utf8("x"))));
        assertEquals("0000000000000007" + "0000000000000304" + "0000000000000102" + "00000001" + "6b"
                + "00000002" + "7676" + "00000001" + "00000001" + "68" + "00000001" + "78",
                HexFormat.of().formatHex(RecordDigestFormat.encode(record)));
    }

    @Test
    void noKeyAndANullValueAreTheirOwnLengthAndDifferFromEmptyOnes() {
        Record none = new Record(1, 2, 3, null, null, List.of());
        assertEquals("0000000000000001" + "0000000000000003" + "0000000000000002" + "ffffffff" + "ffffffff"
                + "00000000", HexFormat.of().formatHex(RecordDigestFormat.encode(none)));
        assertNotEquals(HexFormat.of().formatHex(RecordDigestFormat.encode(none)), HexFormat.of().formatHex(
                RecordDigestFormat.encode(new Record(1, 2, 3, new byte[0], new byte[0], List.of()))));
    }
}
