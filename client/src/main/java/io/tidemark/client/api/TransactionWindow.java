package io.tidemark.client.api;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;

/**
 * The open window of a runtime in Transactional mode: one producer transaction holding what the handlers sent (their
 * outputs, retry and dead-letter copies) since it opened, and where each partition's records of it began. The polling
 * thread opens it with the first record it hands out and ends it every commit interval, once every record handed out
 * has completed: the positions after them go into the transaction ({@code sendOffsetsToTransaction}) and it commits,
 * so the inputs' positions and the outputs become visible together. A window that cannot commit (a handler asked for
 * a retry in place, a send failed, the commit was refused) aborts, and the runtime reads its partitions again from
 * where the window began.
 *
 * <p>The polling thread's, but for {@link #requestAbort}, which workers and callbacks call.
 */
final class TransactionWindow {
    private static final Logger LOG = LoggerFactory.getLogger(TransactionWindow.class);

    private final TidemarkProducer producer;
    private final Map<TopicPartition, Long> firstOffsets = new HashMap<>();
    private boolean open;
    private volatile String abortReason;

    TransactionWindow(TidemarkProducer producer) {
        this.producer = producer;
    }

    /** Before a record of {@code tp} at {@code offset} is handed out: opens the window with the first one. */
    void handingOut(TopicPartition tp, long offset) {
        if (!open) {
            producer.beginTransaction();
            open = true;
        }
        firstOffsets.putIfAbsent(tp, offset);
    }

    boolean open() {
        return open;
    }

    /** The window cannot commit: it aborts when it ends. Any thread. */
    void requestAbort(String reason) {
        if (abortReason == null) {
            abortReason = reason;
        }
    }

    /**
     * Ends the window once nothing handed out in it is still running: commits it with {@code positions}, or aborts it.
     *
     * @return empty when it committed; when it aborted, where each of its partitions' records began (to read again)
     * @throws TidemarkException INVALID_PRODUCER_EPOCH when the producer was fenced (another instance took over)
     */
    Map<TopicPartition, Long> end(Map<TopicPartition, OffsetAndMetadata> positions, ConsumerGroupMetadata group) {
        if (!open) {
            return Map.of();
        }
        if (abortReason == null) {
            try {
                producer.sendOffsetsToTransaction(positions, group);
                producer.commitTransaction();
                reset();
                return Map.of();
            } catch (TidemarkException e) {
                if (e.code() == ErrorCode.INVALID_PRODUCER_EPOCH) {
                    throw e;
                }
                abortReason = "its commit failed: " + e.getMessage();
            }
        }
        LOG.info("Aborting the window over {}: {}; its records are read again", firstOffsets.keySet(), abortReason);
        producer.abortTransaction();
        Map<TopicPartition, Long> rewind = Map.copyOf(firstOffsets);
        reset();
        return rewind;
    }

    private void reset() {
        firstOffsets.clear();
        open = false;
        abortReason = null;
    }
}
