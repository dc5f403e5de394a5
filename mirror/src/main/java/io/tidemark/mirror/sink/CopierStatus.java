package io.tidemark.mirror.sink;

import java.util.Objects;
import java.util.Optional;

/**
 * A copier's state at one moment, as {@code tidemark mirror status} shows it.
 *
 * @param state                 what the copier does
 * @param recordsBehind         records the source partition has that the target holds neither as copies nor in the
 *                              dead-letter topic, as far as the mirror knows ({@link PartitionCopier.Lag})
 * @param sourceLogEndOffset    the source log end offset that count starts from; {@link OffsetMap#NONE} until known
 * @param lastOriginOffset      the last source offset of which the target partition holds the copy;
 *                              {@link OffsetMap#NONE} while unknown or none
 * @param lastCopyReceiveTimeMs the target's ReceiveTime of the last copy this mirror process stored; 0 when none
 * @param stopReason            why the partition stopped, for {@link CopyState#STOPPED}
 */
public record CopierStatus(CopyState state, long recordsBehind, long sourceLogEndOffset, long lastOriginOffset,
                           long lastCopyReceiveTimeMs, Optional<StopReason> stopReason) {
    public CopierStatus {
        Objects.requireNonNull(state, "state");
        if (stopReason.isPresent() != (state == CopyState.STOPPED)) {
            throw new IllegalArgumentException("a stop reason goes with the stopped state only, not " + state);
        }
    }
}
