package io.tidemark.core.topic;

import io.tidemark.core.group.GroupOffsetStore;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.mirror.MirrorStateFormat;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchReader;
import io.tidemark.proto.v1.ErrorCode;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * What clients may do to internal topics (names starting with {@value Topic#INTERNAL_PREFIX}), which the brokers and
 * the tools they belong to write and read back: a record there that its readers cannot parse is refused at the door,
 * not skipped by every reader ever after.
 * <ul>
 *   <li>{@value GroupOffsetStore#TOPIC}: written by the brokers only, from CommitOffsets ({@link GroupOffsetStore}); a
 *       client Produce is refused.</li>
 *   <li>{@value MirrorStateFormat#TOPIC}: written by {@code tidemark mirror} through its producer; a batch is taken
 *       only when every record has a key and a value that is a mirror state record ({@link MirrorStateFormat#parse}).
 *       Until clients authenticate, "the mirror" is any producer of well-formed records; with principals, the
 *       mirror's.</li>
 *   <li>Any other internal topic: no client Produce.</li>
 * </ul>
 * The brokers create internal topics with their configuration and keep them, so a client may neither alter their
 * configuration nor delete them.
 *
 * <p>Stateless.
 */
public final class InternalTopicWrites {
    private InternalTopicWrites() {
    }

    /**
     * Checks a client's batch for {@code topic} before it is appended; nothing to check for a topic that is not
     * internal.
     *
     * @throws TidemarkException INTERNAL_TOPIC naming the topic and its writer, and for a record refused its index in
     *                           the batch and why
     */
    public static void checkProduce(String topic, ByteBuffer batch) {
        if (!topic.startsWith(Topic.INTERNAL_PREFIX)) {
            return;
        }
        if (!topic.equals(MirrorStateFormat.TOPIC)) {
            throw refused(topic, "clients may not produce to it");
        }
        List<Record> records;
        try {
            records = new RecordBatchReader().records(batch.duplicate());
        } catch (RuntimeException e) {
            throw new TidemarkException(ErrorCode.CORRUPT_BATCH, "the batch for " + topic + " cannot be read: " + e);
        }
        for (int i = 0; i < records.size(); i++) {
            Record record = records.get(i);
            if (record.key() == null || record.value() == null) {
                throw refusedRecord(topic, i, "it has no " + (record.key() == null ? "key" : "value"));
            }
            try {
                MirrorStateFormat.parse(record.value());
            } catch (IllegalArgumentException e) {
                throw refusedRecord(topic, i, e.getMessage());
            }
        }
    }

    /**
     * Checks that a client may alter the configuration of {@code topic} or delete it.
     *
     * @param what the change asked for, for the message ("alter the configuration of", "delete")
     * @throws TidemarkException INTERNAL_TOPIC when the topic is internal
     */
    public static void checkChange(String topic, String what) {
        if (topic.startsWith(Topic.INTERNAL_PREFIX)) {
            throw refused(topic, "clients may not " + what + " it");
        }
    }

    private static TidemarkException refused(String topic, String why) {
        return new TidemarkException(ErrorCode.INTERNAL_TOPIC, "topic '" + topic + "' is internal, kept by "
                + writer(topic) + ": " + why);
    }

    private static TidemarkException refusedRecord(String topic, int index, String why) {
        return new TidemarkException(ErrorCode.INTERNAL_TOPIC, "record " + index + " of the batch for internal "
                + "topic '" + topic + "' (kept by " + writer(topic) + ") is not one of its records: " + why
                + "; nothing of the batch was stored");
    }

    private static String writer(String topic) {
        return switch (topic) {
            case GroupOffsetStore.TOPIC -> "the brokers from CommitOffsets";
            case MirrorStateFormat.TOPIC -> "tidemark mirror";
            default -> "the brokers";
        };
    }
}
