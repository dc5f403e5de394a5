package io.tidemark.core.log;

/**
 * A segment as tools and tests see it.
 *
 * @param firstReceiveTimeMs {@link io.tidemark.core.log.segment.LogSegment#NO_TIME} for an empty segment, as the
 *                           other times
 * @param compacted          whether compaction rewrote it (its offsets may have gaps), or it holds a copy of such a
 *                           segment
 */
public record SegmentInfo(long baseOffset, long nextOffset, int sizeBytes, long firstReceiveTimeMs,
                          long maxReceiveTimeMs, long maxSendTimeMs, int indexEntries, boolean compacted) {
}
