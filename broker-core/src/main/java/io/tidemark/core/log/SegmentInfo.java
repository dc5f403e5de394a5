package io.tidemark.core.log;

/**
 * A segment as tools and tests see it.
 *
 * @param firstReceiveTimeMs {@link io.tidemark.core.log.segment.LogSegment#NO_TIME} for an empty segment, as the
 *                           other times
 */
public record SegmentInfo(long baseOffset, long nextOffset, int sizeBytes, long firstReceiveTimeMs,
                          long maxReceiveTimeMs, long maxSendTimeMs, int indexEntries) {
}
