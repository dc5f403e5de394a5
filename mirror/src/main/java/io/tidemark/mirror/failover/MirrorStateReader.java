package io.tidemark.mirror.failover;

import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.OffsetLookup;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.mirror.MirrorStateFormat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * Reads the target's {@value MirrorStateFormat#TOPIC} from its log start to its log end at the start of the read
 * into a {@link MirrorState}. A week of one mirror's records (the topic's retention, about 600,000 heartbeats) is
 * some 60 MB read in 1 MiB fetches; the state keeps little of it. A record that is not a MirrorStateRecord is
 * logged and skipped: a failover must not be stopped by one bad record.
 *
 * <p>Thread-safe (the admin client is).
 */
public final class MirrorStateReader {
    private static final Logger LOG = LoggerFactory.getLogger(MirrorStateReader.class);
    /** Bytes of batches read per fetch. */
    static final int FETCH_BYTES = 1 << 20;

    private final TidemarkAdmin target;

    public MirrorStateReader(TidemarkAdmin target) {
        this.target = target;
    }

    /** What the target holds about {@code sourceCluster} and {@code group}. */
    public MirrorState read(String sourceCluster, String group) {
        TopicPartition tp = new TopicPartition(MirrorStateFormat.TOPIC, 0);
        OffsetLookup end = target.listOffsets(tp, OffsetSpec.latest());
        MirrorState.Collector collector = new MirrorState.Collector(sourceCluster, group);
        long offset = end.logStartOffset();
        while (offset < end.logEndOffset()) {
            List<ConsumerRecord> records = target.read(tp, offset, FETCH_BYTES);
            if (records.isEmpty()) {
                break;
            }
            for (ConsumerRecord record : records) {
                if (record.offset() < end.logEndOffset()) {
                    add(collector, record);
                }
            }
            offset = records.get(records.size() - 1).offset() + 1;
        }
        return collector.state();
    }

    private static void add(MirrorState.Collector collector, ConsumerRecord record) {
        if (record.value() == null) {
            LOG.warn("Skipping {} record at offset {}: it has no value", MirrorStateFormat.TOPIC, record.offset());
            return;
        }
        try {
            collector.add(MirrorStateFormat.parse(record.value()));
        } catch (IllegalArgumentException e) {
            LOG.warn("Skipping {} record at offset {}: {}", MirrorStateFormat.TOPIC, record.offset(), e.getMessage());
        }
    }
}
