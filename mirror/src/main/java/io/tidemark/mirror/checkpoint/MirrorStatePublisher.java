package io.tidemark.mirror.checkpoint;

import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.proto.mirror.MirrorStateFormat;
import io.tidemark.proto.v1.MirrorCheckpoint;
import io.tidemark.proto.v1.MirrorGap;
import io.tidemark.proto.v1.MirrorHeartbeat;
import io.tidemark.proto.v1.MirrorPartitionStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Writes checkpoints, heartbeats, partition statuses and gaps to the target's {@value MirrorStateFormat#TOPIC} topic
 * ({@link MirrorStateFormat}) through an idempotent producer, SendTime from the mirror's clock. A write that fails is
 * logged, and its future fails: the caller decides whether to write it again.
 *
 * <p>Thread-safe.
 */
public final class MirrorStatePublisher implements MirrorStateSink {
    private static final Logger LOG = LoggerFactory.getLogger(MirrorStatePublisher.class);

    private final TidemarkProducer producer;
    private final Clock clock;

    public MirrorStatePublisher(TidemarkProducer producer, Clock clock) {
        this.producer = producer;
        this.clock = clock;
    }

    @Override
    public CompletableFuture<?> publish(MirrorCheckpoint checkpoint) {
        return send(MirrorStateFormat.key(checkpoint), MirrorStateFormat.value(checkpoint), "checkpoint");
    }

    public CompletableFuture<?> publish(MirrorHeartbeat heartbeat) {
        return send(MirrorStateFormat.key(heartbeat), MirrorStateFormat.value(heartbeat), "heartbeat");
    }

    @Override
    public CompletableFuture<?> publish(MirrorGap gap) {
        return send(MirrorStateFormat.key(gap), MirrorStateFormat.value(gap), "gap");
    }

    public CompletableFuture<?> publish(MirrorPartitionStatus status) {
        return send(MirrorStateFormat.key(status), MirrorStateFormat.value(status), "partition status");
    }

    private CompletableFuture<?> send(byte[] key, byte[] value, String what) {
        return producer.send(new ProducerRecord(MirrorStateFormat.TOPIC, 0, key, value, clock.millis(), List.of()))
                .whenComplete((stored, error) -> {
                    if (error != null) {
                        LOG.warn("Writing a {} to {} failed: {}", what, MirrorStateFormat.TOPIC, error.toString());
                    }
                });
    }
}
