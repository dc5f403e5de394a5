package io.tidemark.cli;

import io.tidemark.client.api.OffsetAndMetadata;
import io.tidemark.client.api.OffsetLookup;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * What {@code tidemark groups reset-offsets} commits: for each partition, the group's committed offset now and the
 * offset the reset moves it to. Every new offset lies within the partition's log, from its start to its end, as
 * Kafka's tool clamps them; one lookup per partition gives the bounds and, for a time, the offset.
 */
final class OffsetResetPlan {
    /** Which time {@code --to-datetime} means. */
    enum By { receive_time, send_time }

    /**
     * Where the reset moves each partition: what to look up in the partition, and the offset wanted from that answer
     * and the group's committed offset (before it is clamped into the log).
     */
    sealed interface Target {
        default OffsetSpec lookup() {
            return OffsetSpec.latest();
        }

        /** @param current the group's committed offset of {@code tp}, empty when it has none */
        long wanted(OffsetLookup lookup, OptionalLong current, String group, TopicPartition tp);

        /** The partition's first offset. */
        record Earliest() implements Target {
            @Override
            public OffsetSpec lookup() {
                return OffsetSpec.earliest();
            }

            @Override
            public long wanted(OffsetLookup lookup, OptionalLong current, String group, TopicPartition tp) {
                return lookup.logStartOffset();
            }
        }

        /** The partition's log end: only records produced from now on are read. */
        record Latest() implements Target {
            @Override
            public long wanted(OffsetLookup lookup, OptionalLong current, String group, TopicPartition tp) {
                return lookup.logEndOffset();
            }
        }

        /** An absolute offset. */
        record Offset(long offset) implements Target {
            @Override
            public long wanted(OffsetLookup lookup, OptionalLong current, String group, TopicPartition tp) {
                return offset;
            }
        }

        /** The committed offset moved by {@code shift} (negative: back). */
        record Shift(long shift) implements Target {
            /** @throws TidemarkException INVALID_REQUEST when the group has no committed offset of the partition */
            @Override
            public long wanted(OffsetLookup lookup, OptionalLong current, String group, TopicPartition tp) {
                if (current.isEmpty()) {
                    throw new TidemarkException(ErrorCode.INVALID_REQUEST, "group " + group + " has no committed "
                            + "offset of " + tp + " to shift; reset it --to-earliest, --to-latest, --to-offset or "
                            + "--to-datetime instead");
                }
                return current.getAsLong() + shift;
            }
        }

        /** The first record at or after {@code timeMs}, by ReceiveTime or SendTime; the log end when none is. */
        record Time(long timeMs, By by) implements Target {
            @Override
            public OffsetSpec lookup() {
                return by == By.receive_time ? OffsetSpec.receiveTime(timeMs) : OffsetSpec.sendTime(timeMs);
            }

            @Override
            public long wanted(OffsetLookup lookup, OptionalLong current, String group, TopicPartition tp) {
                return lookup.found() ? lookup.offset() : lookup.logEndOffset();
            }
        }
    }

    /**
     * One partition of the plan.
     *
     * @param current the group's committed offset, empty when it has none
     */
    record Row(TopicPartition partition, OptionalLong current, long target) {
    }

    private OffsetResetPlan() {
    }

    /**
     * Plans the reset of {@code partitions}.
     *
     * @throws TidemarkException INVALID_REQUEST for a shift of a partition the group has no committed offset of
     */
    static List<Row> plan(TidemarkAdmin admin, String group, List<TopicPartition> partitions, Target target) {
        Map<TopicPartition, OffsetAndMetadata> committed = admin.fetchOffsets(group, partitions);
        List<Row> rows = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            OffsetAndMetadata current = committed.get(tp);
            OptionalLong now = current == null ? OptionalLong.empty() : OptionalLong.of(current.offset());
            rows.add(new Row(tp, now, target(admin, group, tp, now, target)));
        }
        return rows;
    }

    private static long target(TidemarkAdmin admin, String group, TopicPartition tp, OptionalLong current,
                               Target target) {
        OffsetLookup lookup = admin.listOffsets(tp, target.lookup());
        long wanted = target.wanted(lookup, current, group, tp);
        return Math.max(lookup.logStartOffset(), Math.min(lookup.logEndOffset(), wanted));
    }
}
