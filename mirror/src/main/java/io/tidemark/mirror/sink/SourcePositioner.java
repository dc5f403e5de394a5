package io.tidemark.mirror.sink;

/**
 * Moves the source reading position of a copier's partition: the thread that owns the source consumer does it and
 * then calls {@link PartitionCopier#positioned} with the generation it was given, so records read before the move
 * never reach the copier afterwards.
 */
public interface SourcePositioner {
    /** The offset that asks for the source partition's log start. */
    long EARLIEST = -1;

    /** Asks to read the copier's source partition from {@code offset} (or {@link #EARLIEST}). */
    void seek(PartitionCopier copier, int generation, long offset);
}
