package io.tidemark.mirror.checkpoint;

import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.mirror.MirrorMetrics;
import io.tidemark.mirror.sink.PartitionCopier;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.MirrorHeartbeat;
import io.tidemark.proto.v1.PartitionBehind;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;

/**
 * Every heartbeat interval: asks the source for its status (an answer means the mirror heard from it, as does every
 * listing of topics or offsets it gets; records are not counted, as the consumer may hand out records it fetched
 * earlier) and writes a {@link MirrorHeartbeat} to the target: when the mirror last heard from the
 * source, what it copied, how far behind it is (in all and per partition), and the latencies of the records copied
 * since the last heartbeat.
 * The failover tool reads when the source went silent from it, and its buffer X from the latencies.
 *
 * <p>Not thread-safe: one scheduled task runs it.
 */
public final class HeartbeatAgent {
    private static final Logger LOG = LoggerFactory.getLogger(HeartbeatAgent.class);

    private final TidemarkAdmin source;
    private final MirrorStatePublisher publisher;
    private final Iterable<PartitionCopier> copiers;
    private final String sourceCluster;
    private final String targetCluster;
    private final MirrorMetrics metrics;
    private final Clock clock;

    public HeartbeatAgent(TidemarkAdmin source, MirrorStatePublisher publisher, Iterable<PartitionCopier> copiers,
                          String sourceCluster, String targetCluster, MirrorMetrics metrics, Clock clock) {
        this.source = source;
        this.publisher = publisher;
        this.copiers = copiers;
        this.sourceCluster = sourceCluster;
        this.targetCluster = targetCluster;
        this.metrics = metrics;
        this.clock = clock;
    }

    public void run() {
        try {
            source.clusterStatus();
            metrics.heardFromSource(clock.millis());
        } catch (TidemarkException e) {
            LOG.debug("The source did not answer its status: {}", e.getMessage());
        }
        MirrorHeartbeat.Builder heartbeat = MirrorHeartbeat.newBuilder();
        long behind = 0;
        for (PartitionCopier copier : copiers) {
            PartitionCopier.Lag lag = copier.lag();
            if (lag.records() > 0) {
                heartbeat.addPartitionsBehind(PartitionBehind.newBuilder().setSourceTopic(copier.source().topic())
                        .setPartition(copier.source().partition()).setTargetTopic(copier.target().topic())
                        .setRecords(lag.records()).setSourceLogEndOffset(lag.sourceLogEndOffset()));
                behind += lag.records();
            }
        }
        MirrorMetrics.IntervalLatency latency = metrics.takeInterval();
        publisher.publish(heartbeat.setSourceCluster(sourceCluster).setTargetCluster(targetCluster)
                .setMirrorTimeMs(clock.millis()).setLastHeardFromSourceMs(metrics.lastHeardFromSourceMs())
                .setRecordsCopied(metrics.recordsCopied()).setRecordsBehind(behind)
                .setIntervalRecords(latency.records()).setReceiveLatencyMinMs(latency.receiveMinMs())
                .setReceiveLatencyMaxMs(latency.receiveMaxMs()).setSendLatencyMinMs(latency.sendMinMs())
                .setSendLatencyMaxMs(latency.sendMaxMs()).build());
    }
}
