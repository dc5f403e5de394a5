package io.tidemark.mirror;

import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.OffsetLookup;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.mirror.MirrorStateFormat;
import io.tidemark.proto.v1.MirrorStateRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.function.Consumer;

/**
 * Reads a target's {@value MirrorStateFormat#TOPIC} from its log start to its log end at the start of the read, in
 * log order, in {@value #FETCH_BYTES}-byte fetches. A record that is not a MirrorStateRecord is logged and skipped:
 * one bad record must not hide the others. A week of one mirror's records (the topic's retention) is some 60 MB.
 *
 * <p>Thread-safe (the admin client is).
 */
public final class MirrorStateLog {
    private static final Logger LOG = LoggerFactory.getLogger(MirrorStateLog.class);
    /** Bytes of batches read per fetch. */
    static final int FETCH_BYTES = 1 << 20;

    private final TidemarkAdmin target;

    public MirrorStateLog(TidemarkAdmin target) {
        this.target = target;
    }

    /** Hands every record of the topic, as it is now, to {@code reader}, in log order. */
    public void read(Consumer<MirrorStateRecord> reader) {
        TopicPartition tp = new TopicPartition(MirrorStateFormat.TOPIC, 0);
        OffsetLookup end = target.listOffsets(tp, OffsetSpec.latest());
        long offset = end.logStartOffset();
        while (offset < end.logEndOffset()) {
            List<ConsumerRecord> records = target.read(tp, offset, FETCH_BYTES);
            if (records.isEmpty()) {
                break;
            }
            for (ConsumerRecord record : records) {
                if (record.offset() < end.logEndOffset()) {
                    parse(record, reader);
                }
            }
            offset = records.get(records.size() - 1).offset() + 1;
        }
    }

    private static void parse(ConsumerRecord record, Consumer<MirrorStateRecord> reader) {
        if (record.value() == null) {
            LOG.warn("Skipping {} record at offset {}: it has no value", MirrorStateFormat.TOPIC, record.offset());
            return;
        }
        try {
            reader.accept(MirrorStateFormat.parse(record.value()));
        } catch (IllegalArgumentException e) {
            LOG.warn("Skipping {} record at offset {}: {}", MirrorStateFormat.TOPIC, record.offset(), e.getMessage());
        }
    }
}
