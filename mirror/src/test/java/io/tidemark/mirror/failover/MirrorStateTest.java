package io.tidemark.mirror.failover;

import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.v1.MirrorCheckpoint;
import io.tidemark.proto.v1.MirrorHeartbeat;
import io.tidemark.proto.v1.MirrorStateRecord;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

import static io.tidemark.mirror.failover.MirrorStates.BASE_MS;
import static io.tidemark.mirror.failover.MirrorStates.behind;
import static io.tidemark.mirror.failover.MirrorStates.checkpoint;
import static io.tidemark.mirror.failover.MirrorStates.copying;
import static io.tidemark.mirror.failover.MirrorStates.heartbeat;
import static io.tidemark.mirror.failover.MirrorStates.record;
import static io.tidemark.mirror.failover.MirrorStates.state;
import static org.junit.jupiter.api.Assertions.assertEquals;

class MirrorStateTest {
    @Test
    void keepsTheGroupsLatestCheckpointPerPartitionAndNamesTheOthers() {
        MirrorCheckpoint newer = checkpoint(0, 20, 18).build();
        MirrorState state = state(record(checkpoint(0, 10, 9)), record(checkpoint(1, 5, 5)),
                record(checkpoint(0, 7, 7).setGroup("other")), record(checkpoint(0, 1, 1).setSourceCluster("C")),
                record(heartbeat(BASE_MS, BASE_MS).setSourceCluster("D")), MirrorStateRecord.newBuilder()
                        .setCheckpoint(newer).build());

        assertEquals(Map.of(new TopicPartition("orders", 0), newer, new TopicPartition("orders", 1),
                checkpoint(1, 5, 5).build()), state.checkpoints());
        assertEquals(Set.of("g", "other"), state.groupsOfSource());
        assertEquals(Set.of("A", "C", "D"), state.sources());
        assertEquals(Optional.of("B"), state.targetCluster());
        assertEquals(Optional.empty(), state.lastHeartbeat());
        assertEquals(OptionalLong.empty(), state.sourceLastHeardMs());
    }

    @Test
    void keepsTheLastHeartbeatAndTheCopiesOfTheHourBeforeTheLastOne() {
        long hour = MirrorState.LATENCY_WINDOW_MS;
        MirrorHeartbeat old = copying(BASE_MS, 1, 5, 5).build();
        MirrorHeartbeat inWindow = copying(BASE_MS + 1, 2, 6, 7).build();
        MirrorHeartbeat last = copying(BASE_MS + 1 + hour, 3, 8, 9).build();
        MirrorHeartbeat silent = heartbeat(BASE_MS + 2 * hour, BASE_MS + 1 + hour).setRecordsBehind(4)
                .addPartitionsBehind(behind(1, 4)).build();
        MirrorState state = state(record(old.toBuilder()), record(inWindow.toBuilder()), record(last.toBuilder()),
                record(silent.toBuilder()), record(copying(BASE_MS + 3 * hour, 9, 0, 0).setSourceCluster("C")));

        assertEquals(List.of(inWindow, last), state.recentCopies());
        assertEquals(Optional.of(silent), state.lastHeartbeat());
        assertEquals(OptionalLong.of(BASE_MS + 1 + hour), state.sourceLastHeardMs());
        assertEquals(4, state.notCopied(new TopicPartition("orders", 1)));
        assertEquals(0, state.notCopied(new TopicPartition("orders", 0)));
        assertEquals(Optional.of("B"), state.targetCluster());
    }

    @Test
    void aHeartbeatOfAMirrorThatNeverHeardFromTheSourceKnowsNoSilence() {
        assertEquals(OptionalLong.empty(), state(record(heartbeat(BASE_MS, 0))).sourceLastHeardMs());
    }

    @Test
    void aRecordOfAKindItDoesNotUseIsSkipped() {
        MirrorState state = state(MirrorStateRecord.getDefaultInstance());
        assertEquals(Map.of(), state.checkpoints());
        assertEquals(Optional.empty(), state.lastHeartbeat());
    }
}
