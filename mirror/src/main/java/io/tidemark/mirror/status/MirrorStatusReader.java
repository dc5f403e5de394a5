package io.tidemark.mirror.status;

import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.mirror.MirrorStateLog;

import java.util.Optional;

/**
 * Reads what the target's mirrors report about themselves ({@link MirrorStatus}) for {@code tidemark mirror status}.
 *
 * <p>Thread-safe (the admin client is).
 */
public final class MirrorStatusReader {
    private final MirrorStateLog log;

    public MirrorStatusReader(TidemarkAdmin target) {
        this.log = new MirrorStateLog(target);
    }

    /**
     * The status of the mirror from {@code sourceCluster}, or of every mirror writing into the target.
     *
     * @throws IllegalArgumentException when there is none ({@link MirrorStatus.Collector#status})
     */
    public MirrorStatus read(Optional<String> sourceCluster) {
        MirrorStatus.Collector collector = new MirrorStatus.Collector(sourceCluster);
        log.read(collector::add);
        return collector.status();
    }
}
