package io.tidemark.proto.record;

import io.tidemark.proto.record.RecordBatchValidator.SendTimeWindow;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.CRC32C;

import static io.tidemark.proto.record.RecordBatchFormat.*;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Golden bytes of the batch format, so any change to the layout is a deliberate one. */
class RecordBatchFormatTest {
    private static final long BASE_MS = 1_700_000_000_000L;

    /** Two records: one with key, value and a header; one with SendTime 5 ms earlier, null key and value. */
    static ByteBuffer goldenBatch() {
        return new RecordBatchBuilder()
                .producer(7, (short) 3, 11)
                .append(BASE_MS, "k".getBytes(UTF_8), "v1".getBytes(UTF_8), List.of(new Header("h", new byte[] {1, 2})))
                .append(BASE_MS - 5, null, null)
                .build();
    }

    static final String GOLDEN_UNSTAMPED = String.join("",
            "0000000000000000", // base offset 0 (the broker assigns it)
            "00000044", // batch length: 68 bytes follow
            "72098d67", // CRC32C of bytes 16..end
            "01", "00", "0003", // magic 1, attributes 0, producer epoch 3
            "00000002", // record count 2
            "ffffffffffffffff", // ReceiveTime -1 (the broker stamps it)
            "0000018bcfe56800", // First SendTime 1700000000000
            "0000018bcfe56800", // Max SendTime 1700000000000
            "0000000000000007", // producer id 7
            "0000000b", // base sequence 11
            // record 0: length 13, delta 0, SendTime delta 0, key "k", value "v1", 1 header "h" = 01 02
            "0d", "00", "00", "02", "6b", "04", "7631", "01", "01", "68", "02", "0102",
            // record 1: length 5, delta 1, SendTime delta -5 (zigzag 9), null key, null value, 0 headers
            "05", "01", "09", "01", "01", "00");

    @Test
    void builderWritesTheGoldenBytes() {
        ByteBuffer batch = goldenBatch();
        assertEquals(GOLDEN_UNSTAMPED, HexFormat.of().formatHex(batch.array(), 0, batch.limit()));
        assertEquals(HEADER_SIZE_BYTES + 14 + 6, batch.limit());
    }

    @Test
    void stampingWritesOffsetReceiveTimeAndANewCrc() {
        ByteBuffer batch = goldenBatch();
        stamp(new CRC32C(), batch, 0, 100, BASE_MS + 1);
        String hex = HexFormat.of().formatHex(batch.array(), 0, batch.limit());
        assertEquals("0000000000000064", hex.substring(0, 16));
        assertEquals("0000018bcfe56801", hex.substring(2 * RECEIVE_TIME_OFFSET, 2 * RECEIVE_TIME_OFFSET + 16));
        assertEquals(computeCrc(new CRC32C(), batch, 0, batch.limit()), storedCrc(batch, 0));
        assertEquals(GOLDEN_UNSTAMPED.substring(2 * FIRST_SEND_TIME_OFFSET), hex.substring(2 * FIRST_SEND_TIME_OFFSET));
        assertEquals(batch.limit(), new RecordBatchValidator().validate(batch, 0, batch.limit(), SendTimeWindow.UNBOUNDED));
    }

    @Test
    void readerDecodesEveryField() {
        ByteBuffer batch = goldenBatch();
        stamp(new CRC32C(), batch, 0, 100, BASE_MS + 1);
        List<Record> records = new RecordBatchReader().records(batch);
        assertEquals(List.of(
                new Record(100, BASE_MS, BASE_MS + 1, "k".getBytes(UTF_8), "v1".getBytes(UTF_8),
                        List.of(new Header("h", new byte[] {1, 2}))),
                new Record(101, BASE_MS - 5, BASE_MS + 1, null, null, List.of())), records);
        assertEquals(7, producerId(batch, 0));
        assertEquals(3, producerEpoch(batch, 0));
        assertEquals(11, baseSequence(batch, 0));
        assertEquals(101, lastOffset(batch, 0));
    }

    @Test
    void sendTimeSearchInsideABatch() throws IOException {
        ByteBuffer batch = new RecordBatchBuilder().append(50, null, null).append(10, null, null)
                .append(70, null, null).append(60, null, null).build();
        RecordBatchReader reader = new RecordBatchReader();
        ByteBuffer window = ByteBuffer.allocate(1024);
        assertEquals(new RecordBatchReader.SendTimeMatch(0, 50), reader.firstRecordWithSendTimeAtLeast(batch,
                bytesOf(batch), window, 11));
        assertEquals(new RecordBatchReader.SendTimeMatch(2, 70), reader.firstRecordWithSendTimeAtLeast(batch,
                bytesOf(batch), window, 51));
        assertNull(reader.firstRecordWithSendTimeAtLeast(batch, bytesOf(batch), window, 71));
    }

    /**
     * Records of 120 and 20 bytes read through windows of 20 to 64 bytes: every window size finds the same records,
     * reads no byte past the record found, and skips what a window cannot hold.
     */
    @Test
    void sendTimeSearchThroughWindowsSmallerThanTheRecords() throws IOException {
        RecordBatchBuilder builder = new RecordBatchBuilder();
        for (int i = 0; i < 50; i++) {
            builder.append(1_000 + 10L * i, null, i % 2 == 0 ? new byte[100] : new byte[1]);
        }
        ByteBuffer batch = builder.build();
        RecordBatchReader reader = new RecordBatchReader();
        for (int windowBytes = RecordBatchReader.RECORD_PREFIX_MAX_BYTES; windowBytes <= 64; windowBytes++) {
            ByteBuffer window = ByteBuffer.allocate(windowBytes);
            for (int i = 0; i < 50; i++) {
                int[] readUpTo = {0};
                RecordBatchReader.BatchBytes bytes = (into, at) -> {
                    readUpTo[0] = Math.max(readUpTo[0], at + into.remaining());
                    into.put(batch.slice(at, into.remaining()));
                };
                assertEquals(new RecordBatchReader.SendTimeMatch(i, 1_000 + 10L * i),
                        reader.firstRecordWithSendTimeAtLeast(batch, bytes, window, 1_000 + 10L * i - 9));
                assertTrue(readUpTo[0] <= recordStart(batch, i) + windowBytes,
                        "window " + windowBytes + ", record " + i + ": read up to " + readUpTo[0]);
            }
            assertNull(reader.firstRecordWithSendTimeAtLeast(batch, bytesOf(batch), window, 1_491));
        }
        assertEquals("a SendTime scan window of 19 bytes cannot hold a record's first 20",
                assertThrows(IllegalArgumentException.class, () -> reader.firstRecordWithSendTimeAtLeast(batch,
                        bytesOf(batch), ByteBuffer.allocate(19), 0)).getMessage());
    }

    @Test
    void sendTimeSearchRefusesARecordThatRunsPastTheBatch() {
        ByteBuffer batch = new RecordBatchBuilder().append(50, null, new byte[40]).build();
        batch.put(RECORDS_OFFSET, (byte) 0x7F);
        assertEquals("record length 127 runs past the batch end (" + (batch.limit() - RECORDS_OFFSET - 1)
                + " bytes left)", assertThrows(RecordFormatException.class, () -> new RecordBatchReader()
                .firstRecordWithSendTimeAtLeast(batch, bytesOf(batch), ByteBuffer.allocate(64), 50)).getMessage());
    }

    private static RecordBatchReader.BatchBytes bytesOf(ByteBuffer batch) {
        return (into, at) -> into.put(batch.slice(at, into.remaining()));
    }

    /** Where record {@code index} of a batch starts (the batch end after the last). */
    private static int recordStart(ByteBuffer batch, int index) {
        RecordCursor cursor = new RecordCursor();
        int next = RECORDS_OFFSET;
        for (int i = 0; i < index && next < batch.limit(); i++) {
            next = cursor.openRecord(batch, next, batch.limit());
        }
        return next;
    }

    @Test
    void varintsRoundTripAtTheirBoundaries() {
        RecordCursor cursor = new RecordCursor();
        for (long value : new long[] {0, 1, -1, 63, -64, 64, 127, 128, Integer.MAX_VALUE, Integer.MIN_VALUE,
                Long.MAX_VALUE, Long.MIN_VALUE}) {
            ByteBuffer buffer = ByteBuffer.allocate(32);
            Varints.writeSignedLong(buffer, value);
            assertEquals(Varints.sizeOfSignedLong(value), buffer.position());
            cursor.reset(buffer, 0, buffer.position());
            assertEquals(value, cursor.readSignedLong());
        }
        for (int value : new int[] {0, 1, 127, 128, 16383, 16384, Integer.MAX_VALUE}) {
            ByteBuffer buffer = ByteBuffer.allocate(8);
            Varints.writeUnsignedInt(buffer, value);
            assertEquals(Varints.sizeOfUnsignedInt(value), buffer.position());
            cursor.reset(buffer, 0, buffer.position());
            assertEquals(value, cursor.readUnsignedInt());
        }
    }
}
