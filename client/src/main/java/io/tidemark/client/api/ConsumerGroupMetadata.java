package io.tidemark.client.api;

/**
 * A consumer's place in its group, for offsets sent to a transaction
 * ({@link TidemarkProducer#sendOffsetsToTransaction}): the coordinator takes them only from a member the group would
 * take a commit from now, so a consumer whose partitions moved to another member cannot commit through a transaction
 * either.
 *
 * @param memberId    the member's id; empty for a consumer that assigns itself partitions
 * @param memberEpoch the member's epoch; 0 with no member id
 */
public record ConsumerGroupMetadata(String group, String memberId, int memberEpoch) {
    public ConsumerGroupMetadata {
        if (group == null || group.isBlank() || memberId == null) {
            throw new IllegalArgumentException("a consumer group's metadata needs a group and a member id (empty for "
                    + "none), not " + group + " and " + memberId);
        }
    }
}
