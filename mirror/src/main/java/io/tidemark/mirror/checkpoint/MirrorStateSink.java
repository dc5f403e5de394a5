package io.tidemark.mirror.checkpoint;

import io.tidemark.proto.v1.MirrorCheckpoint;
import io.tidemark.proto.v1.MirrorGap;

import java.util.concurrent.CompletableFuture;

/** Where the {@link CheckpointAgent} writes ({@link MirrorStatePublisher}: the target's __mirror_state). */
public interface MirrorStateSink {
    /** Completes once stored; fails with the write's error. */
    CompletableFuture<?> publish(MirrorCheckpoint checkpoint);

    /** Completes once stored; fails with the write's error. */
    CompletableFuture<?> publish(MirrorGap gap);
}
