package io.tidemark.replication.raft;

import io.tidemark.core.config.BrokerConfig;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.netty.NettyConfigKeys;
import org.apache.ratis.rpc.RpcType;
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
 *   <li>election timeout 200-400 ms instead of 150-300 ms: Ratis' follower sleeps a random timeout between
 *       checks, so a dead leader is noticed 1 to 2 timeouts after its last heartbeat; 200-400 ms failed over in p99
 *       0.67 s after a SIGKILL (300-600 ms: 0.9-1.3 s; a narrow 300-350 ms split votes), and under a load saturating
 *       2 cores started half the elections of 150-300 ms, more than 300-600 ms, at the same throughput;</li>
 *   <li>log write buffer 2 MiB instead of 8 MiB, and the appender byte limit (also the largest entry) just under
 *       it: the write buffer is direct memory per group replica; 2 MiB holds a batch of the 1 MiB max.batch.bytes
 *       default with its mirror provenance, and 4 MiB made no difference to produce (docs/benchmarks.md); group
 *       commit fills entries up to {@link #maxRequestBytes};</li>
 *   <li>the transport: Ratis' Netty one in plain text, its gRPC one with TLS ({@link RaftTransport}, which
 *       chooses);</li>
 *   <li>over gRPC (the transport with TLS), a flow-control window of four write buffers instead of 1 MiB: an
 *       appendEntries message carries up to a write buffer of entries, and with 2 MiB buffers Ratis' 1 MiB window
 *       held each such message for window updates (100 partitions, as fast as possible: 12,787 / 16,856 records/s
 *       with a 1 MiB window, 14,512 / 19,465 with 8 MiB, 16,771 with the former 1 MiB buffers);</li>
 *   <li>automatic snapshots every 10,000 entries, in every group, so the Raft log of a busy partition group is
 *       purged behind what every follower has (a snapshot is a fsync of the group's partition logs, see
 *       GroupStateMachine), and so is the metadata group's (its whole state, MetadataStateMachine): Ratis reads the
 *       threshold per server, not per group. A purge follows every snapshot (Ratis waits for 1,024 entries after the
 *       previous purge), and only the latest snapshot file is kept (Ratis keeps them all): each is written whole
 *       before Ratis hears of it;</li>
 *   <li>no snapshot installation by Ratis (notification mode): a snapshot names a position in the partition log,
 *       not its bytes, so it cannot be shipped as files; Ratis tells a replica that fell behind a purge (or that
 *       joins a group) to install one, and the replica copies the leader's log itself through the brokers' API
 *       (GroupStateMachine.notifyInstallSnapshotFromLeader, snapshot.CatchUp);</li>
 *   <li>a leader that stepped down because a majority stopped answering it waits one longest election timeout
 *       before it campaigns again, instead of 10 s: a target of a planned transfer that won but then lost its
 *       followers (a restarted broker whose cold code answered too slowly, seen under load in
 *       ManyPartitionsIT) left the group without a leader for those 10 s. Pre-vote keeps a leader cut off from the
 *       others from disrupting them by campaigning sooner;</li>
 *   <li>one thread (ended when idle) in each group's server and client request pools instead of unbounded
 *       pools, which multiplied threads under load;</li>
 *   <li>over Tidemark's Netty transport, no commit-index entries: Ratis' leader appends a metadata entry (the new
 *       commit index) to the log after every commit and replicates it at once, so each write of a record batch cost
 *       two appendEntries rounds, two log writes and two {@code fdatasync}s on every replica (the brokers'
 *       {@code metadataLogEntryCount}: 2,938 of 5,954 entries in a 120,000-record run at 4,000 records/s). A follower
 *       learns a commit with the leader's next appendEntries instead, and the metadata group's at once, from a
 *       heartbeat ({@link NotifyingLogAppender}); a restarted replica learns its commit index from the leader, so it
 *       applies its committed tail once a majority is up, and a broker serves a partition only from its leader. On
 *       fresh clusters alternating: fixed-rate p50 -23% and -31%, max +18% and +12% (docs/benchmarks.md,
 *       "Commit-index entries"). Over gRPC (with TLS), Ratis' own appender, which has no such heartbeat, keeps
 *       them;</li>
 *   <li>a damaged Raft log entry stops the group ({@code CorruptionPolicy.EXCEPTION}) instead of being dropped
 *       with the entries after it; a last entry torn by a crash mid-write is cut off before Ratis reads the log
 *       ({@link RaftLogCheck}).</li>
 * </ul>
 */
public final class RaftSettings {
    /** Room in a Raft log entry for everything but the request: its header, term, index, client and call ids. */
    public static final int ENTRY_OVERHEAD_BYTES = 4096;
    /** The gRPC flow-control window of the Raft transport, in write buffers (the largest appendEntries message). */
    private static final int FLOW_CONTROL_WINDOW_BUFFERS = 4;

    private RaftSettings() {
    }

    /**
     * @param raftHost the address the Raft server listens on: the member's host, where its peers reach it (a broker
     *                 never opens its Raft port on every interface unless its host says 0.0.0.0)
     * @param rpcType  the transport ({@link RaftTransport#rpcType})
     */
    public static RaftProperties server(Path storageDir, String raftHost, int raftPort,
                                        BrokerConfig.RaftTuning tuning, RpcType rpcType) {
        RaftProperties properties = client(rpcType);
        RaftServerConfigKeys.setStorageDir(properties, List.of(storageDir.toFile()));
        if (rpcType == SupportedRpcType.GRPC) {
            GrpcConfigKeys.Server.setHost(properties, raftHost);
            GrpcConfigKeys.Server.setPort(properties, raftPort);
        } else {
            NettyConfigKeys.Server.setHost(properties, raftHost);
            NettyConfigKeys.Server.setPort(properties, raftPort);
        }
        RaftServerConfigKeys.Rpc.setTimeoutMin(properties,
                TimeDuration.valueOf(tuning.electionTimeoutMinMs(), TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(properties,
                TimeDuration.valueOf(tuning.electionTimeoutMaxMs(), TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.LeaderElection.setLeaderStepDownWaitTime(properties,
                TimeDuration.valueOf(tuning.electionTimeoutMaxMs(), TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Log.setSegmentSizeMax(properties, SizeInBytes.valueOf(tuning.logSegmentBytes()));
        RaftServerConfigKeys.Log.setWriteBufferSize(properties, SizeInBytes.valueOf(tuning.logWriteBufferBytes()));
        // The appender sends at most this much per request, and no log entry may be larger; Ratis requires it to
        // fit in the write buffer with 8 bytes of framing.
        RaftServerConfigKeys.Log.Appender.setBufferByteLimit(properties,
                SizeInBytes.valueOf(tuning.logWriteBufferBytes() - 8));
        GrpcConfigKeys.setFlowControlWindow(properties,
                SizeInBytes.valueOf(FLOW_CONTROL_WINDOW_BUFFERS * tuning.logWriteBufferBytes()));
        RaftServerConfigKeys.Log.setUnsafeFlushEnabled(properties, !tuning.logSync());
        RaftServerConfigKeys.Log.setLogMetadataEnabled(properties, !(rpcType instanceof NettyRaftRpcType));
        // WARN_AND_RETURN would drop a damaged entry and every entry after it in its segment, acknowledged or not.
        // A torn last write (a crash mid-write), which EXCEPTION alone would refuse too, is cut off beforehand by
        // RaftLogCheck.
        RaftServerConfigKeys.Log.setCorruptionPolicy(properties,
                RaftServerConfigKeys.Log.CorruptionPolicy.EXCEPTION);
        RaftServerConfigKeys.Log.Appender.setInstallSnapshotEnabled(properties, false);
        // Each group runs the synchronous part of a server (appendEntries, vote) and a client request on its own
        // pools; unbounded by default, they grew to 8.5 threads per replica under load with 1,000 replicas per
        // broker. A bounded cached pool in Ratis keeps one thread, which ends after 60 s idle.
        RaftServerConfigKeys.ThreadPool.setServerSize(properties, 1);
        RaftServerConfigKeys.ThreadPool.setClientSize(properties, 1);
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(properties, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(properties, tuning.snapshotIntervalEntries());
        // Snapshots are snapshotIntervalEntries apart already; a larger gap would keep entries no one needs.
        RaftServerConfigKeys.Log.setPurgeGap(properties, 1);
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(properties, 1);
        return properties;
    }

    /**
     * The largest request ({@code GroupEntryFormat}) a partition group takes as one entry: the appender's byte
     * limit less {@link #ENTRY_OVERHEAD_BYTES} for the entry's header and the fields Ratis wraps it in. A larger
     * entry would not fit in the Raft log's write buffer, which Ratis treats as an I/O failure of the group.
     */
    public static int maxRequestBytes(RaftProperties server) {
        return RaftServerConfigKeys.Log.Appender.bufferByteLimit(server).getSizeInt() - ENTRY_OVERHEAD_BYTES;
    }

    /** Ratis' settings for a client over {@code rpcType}, and the part of a server's settings they share. */
    public static RaftProperties client(RpcType rpcType) {
        RaftProperties properties = new RaftProperties();
        RaftConfigKeys.Rpc.setType(properties, rpcType);
        return properties;
    }
}
