package io.tidemark.client.api;

/**
 * Where an acknowledged record was stored.
 *
 * @param offset        the record's offset in its partition
 * @param receiveTimeMs ReceiveTime the partition leader stamped on the record's batch, ms since the epoch
 * @param sendTimeMs    the record's SendTime, ms since the epoch
 */
public record RecordMetadata(String topic, int partition, long offset, long receiveTimeMs, long sendTimeMs) {
}
