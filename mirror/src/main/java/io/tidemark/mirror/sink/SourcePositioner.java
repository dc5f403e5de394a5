package io.tidemark.mirror.sink;

/**
 * Moves the source reading position of a copier's partition: the thread that owns the source consumer does it and
 * then calls {@link PartitionCopier#positioned} with the generation it was given, so records read before the move
 * never reach the copier afterwards. The position is in the source topic of the copier's origin id: records of a topic
 * created again under the name are never read for it.
 */
public interface SourcePositioner {
    /** The offset that asks for the source partition's log start. */
    long EARLIEST = -1;

    /** Asks to read the copier's source partition from {@code offset} (or {@link #EARLIEST}). */
    void seek(PartitionCopier copier, int generation, long offset);
}
