package io.tidemark.core.log.segment;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.file.OpenFileCache;
import io.tidemark.proto.record.RecordBatchFormat;

/**
 * What a partition's segments are made with: its topic's index settings, and the process's cache every segment
 * opens its files through.
 *
 * @param indexIntervalBytes {@code index.interval.bytes}
 * @param segmentBytes       {@code segment.bytes}: bounds the entries an active segment's index can get
 * @param segmentIndexBytes  {@code segment.index.bytes}
 * @param files              the open-file cache ({@code log.open.files.max})
 */
public record SegmentSettings(int indexIntervalBytes, int segmentBytes, int segmentIndexBytes, OpenFileCache files) {
    public static SegmentSettings of(TopicConfig config, OpenFileCache files) {
        return new SegmentSettings(config.indexIntervalBytes(), config.segmentBytes(), config.segmentIndexBytes(),
                files);
    }

    /**
     * Bytes an index of {@code entrySize}-byte entries is preallocated to while its segment takes appends:
     * {@code segment.index.bytes}, but never more than a segment of {@code segment.bytes} can fill, and never less
     * than a log of {@code logBytes} already fills, so that a segment written under other settings is recovered
     * whole. A segment gets an entry per {@code index.interval.bytes} of batches and at most one per batch, and a
     * batch is at least its header: so with the defaults (1 GiB, 4 KiB) an index is preallocated to 262,145
     * entries (2 MiB of offsets, 3 MiB of each time) and not to 10 MiB. Preallocated files are sparse and only the
     * pages of written entries are resident, so this saves address space and apparent disk size, not memory.
     */
    int indexPreallocationBytes(int entrySize, long logBytes) {
        long room = Math.max(Math.min(segmentIndexBytes, entriesFor(segmentBytes) * entrySize),
                entriesFor(logBytes) * entrySize);
        return (int) Math.min(room, Integer.MAX_VALUE);
    }

    private long entriesFor(long logBytes) {
        return logBytes / Math.max(indexIntervalBytes, RecordBatchFormat.HEADER_SIZE_BYTES) + 1;
    }
}
