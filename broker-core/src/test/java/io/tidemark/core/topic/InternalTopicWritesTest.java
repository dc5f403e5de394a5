package io.tidemark.core.topic;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.mirror.MirrorStateFormat;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MirrorHeartbeat;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class InternalTopicWritesTest {
    private static final MirrorHeartbeat HEARTBEAT = MirrorHeartbeat.newBuilder().setSourceCluster("east")
            .setTargetCluster("west").setMirrorTimeMs(1_700_000_000_000L).build();

    @Test
    void anyBatchGoesToATopicThatIsNotInternal() {
        assertDoesNotThrow(() -> InternalTopicWrites.checkProduce("orders", garbage()));
        assertDoesNotThrow(() -> InternalTopicWrites.checkChange("orders", "delete"));
    }

    @Test
    void noClientProducesToTheGroupOffsets() {
        TidemarkException e = assertThrows(TidemarkException.class,
                () -> InternalTopicWrites.checkProduce("__group_offsets", garbage()));
        assertEquals(ErrorCode.INTERNAL_TOPIC, e.code());
        assertEquals("topic '__group_offsets' is internal, kept by the brokers from CommitOffsets: clients may not "
                + "produce to it", e.getMessage());
    }

    @Test
    void noClientProducesToAnInternalTopicWithoutAKnownWriter() {
        TidemarkException e = assertThrows(TidemarkException.class,
                () -> InternalTopicWrites.checkProduce("__future", garbage()));
        assertEquals("topic '__future' is internal, kept by the brokers: clients may not produce to it",
                e.getMessage());
    }

    @Test
    void theMirrorStateTakesBatchesOfMirrorStateRecordsOnly() {
        ByteBuffer good = new RecordBatchBuilder()
                .append(1, MirrorStateFormat.key(HEARTBEAT), MirrorStateFormat.value(HEARTBEAT)).build();
        assertDoesNotThrow(() -> InternalTopicWrites.checkProduce(MirrorStateFormat.TOPIC, good));
        assertEquals(0, good.position(), "the batch is read, not consumed");

        ByteBuffer mixed = new RecordBatchBuilder()
                .append(1, MirrorStateFormat.key(HEARTBEAT), MirrorStateFormat.value(HEARTBEAT))
                .append(2, bytes("heartbeat/east"), new byte[]{(byte) 0xff, 0x01}).build();
        TidemarkException e = assertThrows(TidemarkException.class,
                () -> InternalTopicWrites.checkProduce(MirrorStateFormat.TOPIC, mixed));
        assertEquals(ErrorCode.INTERNAL_TOPIC, e.code());
        assertEquals("record 1 of the batch for internal topic '__mirror_state' (kept by tidemark mirror) is not one "
                + "of its records: a __mirror_state record is not a MirrorStateRecord: Protocol message tag had "
                + "invalid wire type.; nothing of the batch was stored", e.getMessage());

        ByteBuffer keyless = new RecordBatchBuilder().append(1, null, MirrorStateFormat.value(HEARTBEAT)).build();
        assertEquals("record 0 of the batch for internal topic '__mirror_state' (kept by tidemark mirror) is not one "
                + "of its records: it has no key; nothing of the batch was stored", assertThrows(
                TidemarkException.class, () -> InternalTopicWrites.checkProduce(MirrorStateFormat.TOPIC, keyless))
                .getMessage());
    }

    @Test
    void noClientAltersOrDeletesAnInternalTopic() {
        TidemarkException e = assertThrows(TidemarkException.class,
                () -> InternalTopicWrites.checkChange("__mirror_state", "alter the configuration of"));
        assertEquals(ErrorCode.INTERNAL_TOPIC, e.code());
        assertEquals("topic '__mirror_state' is internal, kept by tidemark mirror: clients may not alter the "
                + "configuration of it", e.getMessage());
        assertEquals("topic '__group_offsets' is internal, kept by the brokers from CommitOffsets: clients may not "
                + "delete it", assertThrows(TidemarkException.class,
                () -> InternalTopicWrites.checkChange("__group_offsets", "delete")).getMessage());
    }

    private static ByteBuffer garbage() {
        return new RecordBatchBuilder().append(1, bytes("k"), bytes("v")).build();
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
