package io.tidemark.core.log;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.TransactionMarker;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static io.tidemark.core.log.LogTestUtils.BASE_MS;
import static io.tidemark.core.log.LogTestUtils.bytes;
import static io.tidemark.core.log.LogTestUtils.config;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** What a leader takes from a client: never a transaction marker, and no transactional batch without a coordinator. */
class BatchAdmissionTest {
    private final BatchAdmission admission = new BatchAdmission();

    @Test
    void aClientsMarkerIsRefused() {
        TidemarkException e = assertThrows(TidemarkException.class, () -> admission.admit(
                TransactionMarker.build(7, (short) 0, true, 0, BASE_MS), config(), 1 << 20));
        assertEquals(ErrorCode.INVALID_TXN_STATE, e.code());
        assertEquals("a transaction marker is written by the brokers, never produced", e.getMessage());
    }

    @Test
    void aTransactionalBatchIsRefusedWhileNoCoordinatorRuns() {
        ByteBuffer batch = new RecordBatchBuilder().producer(7, (short) 0, 0).transactional()
                .append(BASE_MS, null, bytes("v")).build();
        TidemarkException e = assertThrows(TidemarkException.class,
                () -> admission.admit(batch, config(), 1 << 20));
        assertEquals(ErrorCode.INVALID_TXN_STATE, e.code());
        ByteBuffer plain = new RecordBatchBuilder().producer(7, (short) 0, 0).append(BASE_MS, null, bytes("v")).build();
        assertEquals(BASE_MS, admission.admit(plain, config(), 1 << 20).maxSendTimeMs());
    }
}
