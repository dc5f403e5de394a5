package io.tidemark.core.log.segment;

import io.tidemark.core.log.index.IndexFile;
import io.tidemark.core.log.index.MappedIndex;
import io.tidemark.core.log.index.OffsetIndex;
import io.tidemark.core.log.index.TimeIndex;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

import static io.tidemark.proto.record.RecordBatchFormat.*;

/**
 * Loads a segment that was closed cleanly without reading all of it: the indexes give everything up to their
 * last entry, and only the batch headers after it are read (a few KiB). On the way it checks what can be
 * checked cheaply, so a damaged segment is sent to {@link SegmentRecovery} instead of being trusted:
 * <ul>
 *   <li>each index file is a whole number of entries, in order;</li>
 *   <li>the three indexes have the same number of entries at the same offsets;</li>
 *   <li>the last entry points at a batch with that offset and that ReceiveTime;</li>
 *   <li>the batches after it are whole, with contiguous offsets (increasing ones in a compacted segment);</li>
 *   <li>none of them should have had an index entry (else the index is short).</li>
 * </ul>
 * CRCs are not checked here: a clean shutdown fsynced every byte.
 */
public final class SegmentLoader {
    private SegmentLoader() {
    }

    /** @return null when the segment loaded consistently, else what is wrong with it */
    public static String load(LogSegment segment) throws IOException {
        try (OpenSegment open = segment.files().acquire()) {
            return load(segment, open);
        }
    }

    private static String load(LogSegment segment, OpenSegment open) throws IOException {
        String indexProblem = indexProblem(segment.files(), open);
        if (indexProblem != null) {
            return indexProblem;
        }
        long fileSize = segment.files().logFileBytes();
        if (fileSize > Integer.MAX_VALUE) {
            return "log file of " + fileSize + " bytes is above the 2 GiB a segment may hold";
        }
        int end = (int) fileSize;
        int entries = segment.indexEntries();
        OffsetIndex offsets = open.offsetIndex();
        int entryPosition = entries == 0 ? -1 : offsets.positionAt(entries - 1);
        ByteBuffer header = ByteBuffer.allocate(HEADER_SIZE_BYTES);
        if (entryPosition >= end) {
            return "the last index entry points at position " + entryPosition + ", past the log's " + end + " bytes";
        }
        long firstReceiveTime = LogSegment.NO_TIME;
        if (end > 0) {
            if (open.readHeader(0, header, end) < 0) {
                return "the first batch is torn";
            }
            firstReceiveTime = receiveTime(header, 0);
        }
        long maxReceiveTime = LogSegment.NO_TIME;
        long maxSendTime = entries == 0 ? LogSegment.NO_TIME : open.sendTimeIndex().timeAt(entries - 1);
        long expectedOffset = entries == 0 ? segment.baseOffset() : offsets.offsetAt(entries - 1);
        int position = Math.max(entryPosition, 0);
        int sinceEntry = 0;
        while (position < end) {
            int size = open.readHeader(position, header, end);
            if (size < 0) {
                return "the batch at position " + position + " is torn";
            }
            long base = baseOffset(header, 0);
            String offsetProblem = position != entryPosition
                    ? SegmentRecovery.offsetProblem(segment, base, expectedOffset)
                    : base == expectedOffset ? null : "has offset " + base + " where its index entry says "
                    + expectedOffset;
            if (offsetProblem != null) {
                return "the batch at position " + position + " " + offsetProblem;
            }
            expectedOffset = base;
            if (position == entryPosition) {
                long indexed = open.receiveTimeIndex().timeAt(entries - 1);
                if (indexed != receiveTime(header, 0)) {
                    return "time index entry says ReceiveTime " + indexed + " for offset " + expectedOffset
                            + ", the log says " + receiveTime(header, 0);
                }
                sinceEntry = 0;
            } else if (sinceEntry >= segment.indexIntervalBytes()) {
                return "index is short: the batch at offset " + expectedOffset + " should have an entry";
            }
            sinceEntry += size;
            expectedOffset = lastOffset(header, 0) + 1;
            maxReceiveTime = receiveTime(header, 0);
            maxSendTime = Math.max(maxSendTime, maxSendTime(header, 0));
            position += size;
        }
        segment.restore(position, expectedOffset, firstReceiveTime, maxReceiveTime, maxSendTime, sinceEntry);
        return null;
    }

    private static String indexProblem(SegmentFiles files, OpenSegment open) throws IOException {
        for (IndexFile index : files.indexes()) {
            if (!index.openedWithWholeEntries()) {
                return index.file().getFileName() + " is not a whole number of entries";
            }
        }
        OffsetIndex offsets = open.offsetIndex();
        TimeIndex receiveTimes = open.receiveTimeIndex();
        TimeIndex sendTimes = open.sendTimeIndex();
        for (MappedIndex index : List.of(offsets, receiveTimes, sendTimes)) {
            String problem = index.inconsistency();
            if (problem != null) {
                return index.file().getFileName() + ": " + problem;
            }
        }
        if (receiveTimes.entries() != offsets.entries() || sendTimes.entries() != offsets.entries()) {
            return "the indexes disagree on their number of entries: " + offsets.entries() + ", "
                    + receiveTimes.entries() + ", " + sendTimes.entries();
        }
        for (int slot = 0; slot < offsets.entries(); slot++) {
            if (receiveTimes.offsetAt(slot) != offsets.offsetAt(slot)
                    || sendTimes.offsetAt(slot) != offsets.offsetAt(slot)) {
                return "index entry " + slot + " points at offsets " + offsets.offsetAt(slot) + ", "
                        + receiveTimes.offsetAt(slot) + ", " + sendTimes.offsetAt(slot);
            }
        }
        return null;
    }
}
