package io.tidemark.replication.statemachine;

import io.tidemark.core.config.TopicConfig;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A partition group's replica that leads it, driven entry by entry without Ratis (the core, {@link PartitionHost},
 * over its directory, with the broker's topic defaults): for tests of the code around a group outside this package.
 */
public final class LeadingReplica implements Closeable {
    private final PartitionHost host;
    private long index;

    public LeadingReplica(String name, Path dir, long nowMs) throws IOException {
        host = new PartitionHost(name, dir, TopicConfig::parse);
        host.open(Optional.empty(), nowMs);
    }

    public PartitionHost host() {
        return host;
    }

    /** Appends a request as the leader would (batches stamped at {@code nowMs}) and applies it; its reply. */
    public synchronized ByteBuffer lead(ByteString request, long nowMs) {
        return lead(host, request, ++index, nowMs).reply();
    }

    /** A request a leader stamped and applied: the entry as the group's log holds it (flat bytes), and the reply. */
    record Led(ByteString entry, ByteBuffer reply) {
    }

    /** The leader's path on {@code host}: stamps a request of batches at {@code nowMs}, applies it as entry index. */
    static Led lead(PartitionHost host, ByteString request, long index, long nowMs) {
        StampedEntry stamped = null;
        ByteString data = request;
        if (GroupEntryFormat.ofBatches(request)) {
            stamped = StampedEntry.of(request);
            host.stamp(stamped, nowMs);
            data = stamped.data();
        }
        ByteString entry = ByteString.copyFrom(data.toByteArray());
        return new Led(entry, ByteBuffer.wrap(host.apply(data, index, stamped, nowMs)));
    }

    @Override
    public void close() throws IOException {
        host.close();
    }
}
