package io.tidemark.mirror.sink;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.util.EnumSet;
import java.util.Set;

/**
 * What a {@link PartitionCopier} does when the target does not take what it sent: the rule behind "a record is
 * either delivered, or named in a report". Pure: error codes and counts in, an {@link Action} out.
 * <ul>
 *   <li>A batch refused for one of its records (a SendTime outside the target's window, a record too large, a
 *       corrupt record: {@link #RECORD_ERRORS}) is sent again one record per batch, to find the record. A record
 *       refused alone goes to the dead-letter topic when there is one, else the partition stops: nothing after it is
 *       copied, so nothing is silently passed over.</li>
 *   <li>The dead-letter topic refusing it too stops the partition; ORIGIN_OFFSET_HELD there means it was
 *       dead-lettered before (a mirror restarted after writing it), so copying goes on.</li>
 *   <li>A batch the target already holds (ORIGIN_OFFSET_HELD) sends the copier back to ask where to continue; a
 *       target topic that is gone (UNKNOWN_TOPIC, UNKNOWN_PARTITION) is made again first; anything else (a write
 *       whose fate is unknown after the writer's retries) is asked about again after a pause.</li>
 * </ul>
 *
 * <p>Stateless.
 */
public final class RefusalPolicy {
    /** Errors that name one record of a batch: the same record is refused again, however often it is sent. */
    public static final Set<ErrorCode> RECORD_ERRORS = EnumSet.of(ErrorCode.INVALID_TIMESTAMP,
            ErrorCode.RECORD_TOO_LARGE, ErrorCode.CORRUPT_BATCH);
    private static final Set<ErrorCode> TARGET_GONE = EnumSet.of(ErrorCode.UNKNOWN_TOPIC, ErrorCode.UNKNOWN_PARTITION);

    /** What to do next. */
    public enum Action {
        /** Ask the target where to continue, now. */
        RESYNC,
        /** Ask the target where to continue, after a pause. */
        RESYNC_LATER,
        /** Make the target topic again like its source topic, then ask where to continue. */
        RECREATE_TARGET,
        /** Send the batch's records again, one record per batch. */
        RESEND_ONE_PER_BATCH,
        /** Write the refused record to the dead-letter topic. */
        DEAD_LETTER,
        /** The record is in the dead-letter topic: go on with the next one. */
        GO_ON,
        /** Stop the partition, saying why. */
        STOP
    }

    private RefusalPolicy() {
    }

    /**
     * A copy batch of {@code records} records was refused with {@code code}.
     *
     * @param deadLetterTopic whether the mirror has a dead-letter topic
     */
    public static Action afterCopyRefused(int records, ErrorCode code, boolean deadLetterTopic) {
        if (code == ErrorCode.ORIGIN_OFFSET_HELD) {
            return Action.RESYNC;
        }
        if (TARGET_GONE.contains(code)) {
            return Action.RECREATE_TARGET;
        }
        if (!RECORD_ERRORS.contains(code)) {
            return Action.RESYNC_LATER;
        }
        if (records > 1) {
            return Action.RESEND_ONE_PER_BATCH;
        }
        return deadLetterTopic ? Action.DEAD_LETTER : Action.STOP;
    }

    /** The dead-letter write of a refused record was refused with {@code code}. */
    public static Action afterDeadLetterRefused(ErrorCode code) {
        if (code == ErrorCode.ORIGIN_OFFSET_HELD) {
            return Action.GO_ON;
        }
        // The writer retried these until its delivery timeout: the write's fate is unknown. Copying the record again
        // leads back here, and the dead-letter topic's origin offsets keep it from being stored twice.
        if (TidemarkException.retriable(code)) {
            return Action.RESYNC_LATER;
        }
        return Action.STOP;
    }

    /** Asking the target which origin offset it holds failed with {@code code}. */
    public static Action afterAskRefused(ErrorCode code) {
        return TARGET_GONE.contains(code) ? Action.RECREATE_TARGET : Action.RESYNC_LATER;
    }
}
