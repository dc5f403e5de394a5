package io.tidemark.mirror.failover;

import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.mirror.MirrorStateLog;
import io.tidemark.proto.mirror.MirrorStateFormat;

/**
 * Reads the target's {@value MirrorStateFormat#TOPIC} ({@link MirrorStateLog}) into a {@link MirrorState}: the state
 * keeps little of a week of records. A record that is not a MirrorStateRecord is logged and skipped: a failover must
 * not be stopped by one bad record.
 *
 * <p>Thread-safe (the admin client is).
 */
public final class MirrorStateReader {
    private final MirrorStateLog log;

    public MirrorStateReader(TidemarkAdmin target) {
        this.log = new MirrorStateLog(target);
    }

    /** What the target holds about {@code sourceCluster} and {@code group}. */
    public MirrorState read(String sourceCluster, String group) {
        MirrorState.Collector collector = new MirrorState.Collector(sourceCluster, group);
        log.read(collector::add);
        return collector.state();
    }
}
