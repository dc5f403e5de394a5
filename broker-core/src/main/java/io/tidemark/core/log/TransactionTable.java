package io.tidemark.core.log;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * What a partition knows of transactions: which producers have one open here, from which offset, and every aborted
 * transaction the log still holds. A transaction opens at a producer's first transactional batch and ends at the
 * next {@link io.tidemark.proto.record.TransactionMarker} of that producer; an abort marker files it as aborted
 * (producer, first offset, marker offset), so a {@code read_committed} reader skips its batches.
 * <ul>
 *   <li>The first offset of the oldest open transaction bounds what {@code read_committed} readers see: the
 *       <i>last stable offset</i> ({@link #firstOpenOffset}); transactions open in the order of their first
 *       offsets, so it is the first one kept.</li>
 *   <li>A producer with an open transaction cannot write a batch outside it (INVALID_TXN_STATE): its batches up to
 *       the marker all belong to the transaction.</li>
 *   <li>Aborted transactions are kept by marker offset and forgotten once the log starts after their marker.</li>
 * </ul>
 * Changed only by appends, so replicas that append the same batches hold the same table; carried over restarts in
 * {@link AppendState}, or rebuilt from the log's batches when a log is opened on its own.
 *
 * <p>Changed under the log's append lock; {@link #abortedOverlapping} and {@link #firstOpenOffset} are read without
 * it, by fetches.
 */
final class TransactionTable {
    /** Producer id to the first offset of its open transaction, in the order they opened. */
    private final LinkedHashMap<Long, Long> open = new LinkedHashMap<>();
    /** Marker offset to the aborted transaction it ended. */
    private final ConcurrentSkipListMap<Long, AppendState.AbortedTransaction> aborted = new ConcurrentSkipListMap<>();
    /**
     * At least the most offsets an aborted transaction kept here spans (not lowered when retention forgets one: a
     * bound, not exact): bounds a search by first offset.
     */
    private volatile long longestAbortedSpan;
    private volatile long firstOpenOffset = Long.MAX_VALUE;

    /**
     * Checks a producer's data batch before it is stored.
     *
     * @throws TidemarkException INVALID_TXN_STATE for a batch outside the producer's open transaction
     */
    void checkData(long producerId, boolean transactional) {
        if (!transactional && open.containsKey(producerId)) {
            throw new TidemarkException(ErrorCode.INVALID_TXN_STATE, "producer " + producerId + " has a transaction "
                    + "open in this partition since offset " + open.get(producerId) + "; it cannot write outside it "
                    + "before the transaction ends");
        }
    }

    /** Records a stored data batch: a producer's first transactional batch opens its transaction. */
    void dataStored(long producerId, boolean transactional, long baseOffset) {
        if (transactional && open.putIfAbsent(producerId, baseOffset) == null && open.size() == 1) {
            firstOpenOffset = baseOffset;
        }
    }

    /** Records a stored marker at {@code offset}: it ends the producer's open transaction, if it has one. */
    void markerStored(long producerId, boolean commit, long offset) {
        Long first = open.remove(producerId);
        if (first == null) {
            return;
        }
        if (!commit) {
            longestAbortedSpan = Math.max(longestAbortedSpan, offset - first);
            aborted.put(offset, new AppendState.AbortedTransaction(producerId, first, offset));
        }
        // last: a reader that sees the stable offset move past the transaction must find it among the aborted
        firstOpenOffset = open.isEmpty() ? Long.MAX_VALUE : open.values().iterator().next();
    }

    /** The first offset of the oldest open transaction; {@link Long#MAX_VALUE} when none is open. */
    long firstOpenOffset() {
        return firstOpenOffset;
    }

    /** The aborted transactions holding an offset in {@code [from, to)}, by marker offset. */
    List<AppendState.AbortedTransaction> abortedOverlapping(long from, long to) {
        List<AppendState.AbortedTransaction> found = new ArrayList<>();
        long span = longestAbortedSpan;
        for (AppendState.AbortedTransaction transaction : aborted.tailMap(from, true).values()) {
            if (transaction.lastOffset() - span >= to) {
                break;
            }
            if (transaction.firstOffset() < to) {
                found.add(transaction);
            }
        }
        return found;
    }

    /** Forgets the aborted transactions whose marker is below {@code logStartOffset}. */
    void forgetAbortedBelow(long logStartOffset) {
        aborted.headMap(logStartOffset).clear();
    }

    List<AppendState.OpenTransaction> openEntries() {
        List<AppendState.OpenTransaction> entries = new ArrayList<>(open.size());
        for (Map.Entry<Long, Long> entry : open.entrySet()) {
            entries.add(new AppendState.OpenTransaction(entry.getKey(), entry.getValue()));
        }
        return entries;
    }

    List<AppendState.AbortedTransaction> abortedEntries() {
        return List.copyOf(aborted.values());
    }

    /** Replaces the table by the given open transactions (in the order they opened) and aborted ones. */
    void reset(List<AppendState.OpenTransaction> openTransactions,
               List<AppendState.AbortedTransaction> abortedTransactions) {
        clear();
        for (AppendState.OpenTransaction transaction : openTransactions) {
            dataStored(transaction.producerId(), true, transaction.firstOffset());
        }
        long span = 0;
        for (AppendState.AbortedTransaction transaction : abortedTransactions) {
            aborted.put(transaction.lastOffset(), transaction);
            span = Math.max(span, transaction.lastOffset() - transaction.firstOffset());
        }
        longestAbortedSpan = span;
    }

    void clear() {
        open.clear();
        aborted.clear();
        longestAbortedSpan = 0;
        firstOpenOffset = Long.MAX_VALUE;
    }
}
