package io.tidemark.client.api;

import java.util.Collection;

/**
 * What a subscribed consumer's application hears when its group moves partitions ({@link TidemarkConsumer#subscribe}).
 * Called on the thread that calls {@code poll} (or {@code close}/{@code unsubscribe}), inside that call.
 */
public interface RebalanceListener {
    /**
     * The group takes these partitions from this consumer: their records stop coming once this returns. The last
     * chance to commit what was processed of them ({@link TidemarkConsumer#commitSync} still may).
     */
    void onPartitionsRevoked(Collection<TopicPartition> partitions);

    /** The group gives these partitions to this consumer; they start at the group's committed offsets. */
    void onPartitionsAssigned(Collection<TopicPartition> partitions);

    /**
     * This consumer lost these partitions without giving them up (the group fenced it: its session expired or its
     * epoch fell behind); others may read them already, so a commit of them is refused. By default the same as
     * {@link #onPartitionsRevoked}.
     */
    default void onPartitionsLost(Collection<TopicPartition> partitions) {
        onPartitionsRevoked(partitions);
    }

    /** A listener that does nothing. */
    RebalanceListener NONE = new RebalanceListener() {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
        }
    };
}
