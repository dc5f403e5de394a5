package io.tidemark.replication.raft;

import io.tidemark.core.partition.TopicPartition;
import org.apache.ratis.protocol.RaftGroupId;

import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * Raft group ids, derived from what the group replicates so every broker computes the same id without asking:
 * a name-based UUID of {@code "metadata"} or {@code "partition:" + topic + "/" + partition}. A topic deleted and
 * created again under the same name gets the same ids; its groups are removed with their directories before.
 */
public final class RaftGroups {
    public static final RaftGroupId METADATA = RaftGroupId.valueOf(uuid("metadata"));

    private RaftGroups() {
    }

    public static RaftGroupId partition(TopicPartition partition) {
        return RaftGroupId.valueOf(uuid("partition:" + partition.topic() + "/" + partition.partition()));
    }

    private static UUID uuid(String name) {
        return UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8));
    }
}
