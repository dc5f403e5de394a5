package io.tidemark.replication.raft;

import org.apache.ratis.protocol.RaftGroupId;

import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * The metadata group's Raft group id, which every broker computes without asking: a name-based UUID of
 * {@code "metadata"}. Partition groups get theirs from the metadata group (PartitionGroupRegistry).
 */
public final class RaftGroups {
    public static final RaftGroupId METADATA = RaftGroupId.valueOf(uuid("metadata"));

    private RaftGroups() {
    }

    private static UUID uuid(String name) {
        return UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8));
    }
}
