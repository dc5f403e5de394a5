package io.tidemark.replication.snapshot;

import io.tidemark.core.log.AppendState;
import io.tidemark.core.log.HeldOrigin;
import io.tidemark.proto.record.OriginPartition;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

class AppendStateSnapshotsTest {
    @Test
    void everyPartOfTheStateComesBackAsItWas() {
        AppendState state = new AppendState(40, OptionalLong.of(1_000),
                List.of(new AppendState.Producer(7, (short) 2,
                        List.of(new AppendState.StoredBatch(0, 4, 10, 14, 900))),
                        new AppendState.Producer(9, (short) 5, List.of(), 950, 12)),
                Map.of(new OriginPartition("east", "orders", new UUID(1, 2), 3), new HeldOrigin(55, 20)),
                List.of(new AppendState.OpenTransaction(9, 30), new AppendState.OpenTransaction(7, 33)),
                List.of(new AppendState.AbortedTransaction(8, 2, 9), new AppendState.AbortedTransaction(7, 10, 21)));
        assertEquals(state, AppendStateSnapshots.fromProto(40, AppendStateSnapshots.toProto(state)));
        assertEquals(AppendState.empty(5), AppendStateSnapshots.fromProto(5,
                AppendStateSnapshots.toProto(AppendState.empty(5))), "a snapshot written before transactions");
    }
}
