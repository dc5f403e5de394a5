package io.tidemark.core.log;

/** Where an appended batch went: its first and last offset and the ReceiveTime it was stamped with. */
public record AppendResult(long baseOffset, long lastOffset, long receiveTimeMs) {
}
