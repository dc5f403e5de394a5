package io.tidemark.replication.raft;

import io.tidemark.core.config.BrokerConfig;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The Ratis settings of a broker, from its {@code raft.*} config keys (docs/configuration.md says why each default
 * differs from Ratis' own, after shared/notes/ratis.md):
 * <ul>
 *   <li>election timeout 1-2 s instead of 150-300 ms: many groups on 2 busy cores churned leaders with the
 *       defaults; 1-2 s gave 2.4-3 s crash failover and no churn;</li>
 *   <li>log write buffer 1 MiB and appender byte limit 512 KiB instead of 8 MiB / 4 MiB: the write buffer is
 *       direct memory per partition replica, and 8 MiB ran out of direct memory at ~255 replicas with -Xmx2g;</li>
 *   <li>automatic snapshots every 10,000 entries, so the Raft log of a busy partition is purged behind what every
 *       follower has (a snapshot is a fsync of the partition log, see PartitionStateMachine);</li>
 *   <li>no snapshot installation by Ratis (notification mode): a snapshot names a position in the partition log,
 *       not its bytes, so it cannot be shipped as files; Ratis tells a replica that fell behind a purge (or that
 *       joins a group) to install one, and the replica copies the leader's log itself through the brokers' API
 *       (PartitionStateMachine.notifyInstallSnapshotFromLeader, snapshot.CatchUp);</li>
 *   <li>a torn last entry of the Raft log (a crash mid-write) is dropped with a warning rather than stopping the
 *       group.</li>
 * </ul>
 */
public final class RaftSettings {
    private RaftSettings() {
    }

    public static RaftProperties server(Path storageDir, int raftPort, BrokerConfig.RaftTuning tuning) {
        RaftProperties properties = common();
        RaftServerConfigKeys.setStorageDir(properties, List.of(storageDir.toFile()));
        GrpcConfigKeys.Server.setPort(properties, raftPort);
        RaftServerConfigKeys.Rpc.setTimeoutMin(properties,
                TimeDuration.valueOf(tuning.electionTimeoutMinMs(), TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(properties,
                TimeDuration.valueOf(tuning.electionTimeoutMaxMs(), TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Log.setSegmentSizeMax(properties, SizeInBytes.valueOf(tuning.logSegmentBytes()));
        RaftServerConfigKeys.Log.setWriteBufferSize(properties, SizeInBytes.valueOf(tuning.logWriteBufferBytes()));
        // The appender sends at most this much per request; Ratis requires it to fit in the write buffer.
        RaftServerConfigKeys.Log.Appender.setBufferByteLimit(properties,
                SizeInBytes.valueOf(tuning.logWriteBufferBytes() / 2));
        RaftServerConfigKeys.Log.setUnsafeFlushEnabled(properties, !tuning.logSync());
        // A broker killed mid-write leaves a torn last entry in its Raft log; it was never acknowledged (an entry
        // is acknowledged after its fsync), so Ratis may drop it instead of refusing to start the group.
        RaftServerConfigKeys.Log.setCorruptionPolicy(properties,
                RaftServerConfigKeys.Log.CorruptionPolicy.WARN_AND_RETURN);
        RaftServerConfigKeys.Log.Appender.setInstallSnapshotEnabled(properties, false);
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(properties, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(properties, tuning.snapshotIntervalEntries());
        return properties;
    }

    public static RaftProperties client() {
        return common();
    }

    private static RaftProperties common() {
        RaftProperties properties = new RaftProperties();
        RaftConfigKeys.Rpc.setType(properties, SupportedRpcType.GRPC);
        return properties;
    }
}
