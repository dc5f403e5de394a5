package io.tidemark.mirror.failover;

import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * What the operator asks of the failover tool ({@code tidemark failover plan|apply}).
 *
 * @param sourceCluster the dead cluster's name, as its mirror was told ({@code --source-name})
 * @param group         the consumer group to move
 * @param time          how T is chosen for the partitions that resume by time
 * @param bufferMs      X, the buffer before T, in ms ({@code --buffer}); empty to derive it from the mirror's latencies
 * @param topics        the target topics to move; empty for those of the group's checkpoints
 */
public record FailoverRequest(String sourceCluster, String group, TimeChoice time, OptionalLong bufferMs,
                              List<String> topics) {
    public FailoverRequest {
        Objects.requireNonNull(sourceCluster, "sourceCluster");
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(time, "time");
        Objects.requireNonNull(bufferMs, "bufferMs");
        if (bufferMs.isPresent() && bufferMs.getAsLong() < 0) {
            throw new IllegalArgumentException("--buffer " + bufferMs.getAsLong() + " ms is negative");
        }
        topics = List.copyOf(topics);
    }

    /**
     * The {@code --time} choice.
     *
     * @param kind   how T is found
     * @param timeMs for {@link Kind#GIVEN}: T, ms since the epoch; {@link #NO_TIME} otherwise
     */
    public record TimeChoice(Kind kind, long timeMs) {
        /** {@link #timeMs} of the kinds that carry no time. */
        public static final long NO_TIME = -1;

        public enum Kind {
            /** No {@code --time}: exact where the group has a checkpoint, else by time from when the source went silent. */
            NONE,
            /** {@code --time TIME}: every partition by time, T the time given. */
            GIVEN,
            /** {@code --time last-consumed}: every partition by time, T the last consumed record's source ReceiveTime. */
            LAST_CONSUMED,
            /** {@code --time source-silent}: every partition by time, T when the mirror last heard from the source. */
            SOURCE_SILENT
        }

        public TimeChoice {
            Objects.requireNonNull(kind, "kind");
            if (kind == Kind.GIVEN && timeMs < 0) {
                throw new IllegalArgumentException("--time " + timeMs + " is negative; it is ms since the epoch");
            }
            if (kind != Kind.GIVEN && timeMs != NO_TIME) {
                throw new IllegalArgumentException(kind + " takes no time, but " + timeMs + " was given");
            }
        }

        public static TimeChoice none() {
            return new TimeChoice(Kind.NONE, NO_TIME);
        }

        public static TimeChoice given(long timeMs) {
            return new TimeChoice(Kind.GIVEN, timeMs);
        }

        public static TimeChoice lastConsumed() {
            return new TimeChoice(Kind.LAST_CONSUMED, NO_TIME);
        }

        public static TimeChoice sourceSilent() {
            return new TimeChoice(Kind.SOURCE_SILENT, NO_TIME);
        }
    }
}
