package io.tidemark.replication.statemachine;

import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.PartitionGroupRecord;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The partition groups the metadata group knows: for each replica list (the preferred leader first) up to
 * {@code raft.groups.per.replica.set} groups, told apart by their slot. A partition placed on a replica list goes
 * to the group of its slot, which is created when there is none; a group no partition names any more (its topics
 * were deleted, its partitions moved away) is forgotten, and the brokers delete it.
 *
 * <p>Ids are picked when the metadata group applies the command that creates the group: a name-based UUID of the
 * entry's log index and the group's place among those the entry creates, the same on every member and at every
 * replay, and never the id of an earlier group: a replica that deleted a group's directory never meets that group
 * again (it would vote in it having forgotten its log).
 *
 * <p>Threading: changed on the metadata group's apply thread (and restored from a snapshot before it runs) only;
 * {@link #group} and {@link #all} read from any.
 */
final class PartitionGroupRegistry {
    private record Key(List<Integer> replicas, int slot) {
    }

    /** Replica lists node by node, a shorter list first on a tie; then slots. */
    private static final Comparator<PartitionGroupRecord> BY_REPLICAS_AND_SLOT = ((Comparator<PartitionGroupRecord>)
            (a, b) -> Arrays.compare(a.getReplicaNodeIdsList().stream().mapToInt(Integer::intValue).toArray(),
                    b.getReplicaNodeIdsList().stream().mapToInt(Integer::intValue).toArray()))
            .thenComparingInt(PartitionGroupRecord::getSlot);

    private final Map<UUID, PartitionGroupRecord> byId = new ConcurrentHashMap<>();
    private final Map<Key, UUID> byKey = new HashMap<>();

    /** Creates the ids of the groups one entry creates. */
    static final class NewIds {
        private final long index;
        private int created;

        NewIds(long index) {
            this.index = index;
        }

        private UUID next() {
            return UUID.nameUUIDFromBytes(("partition-group@" + index + "/" + created++)
                    .getBytes(StandardCharsets.UTF_8));
        }
    }

    /** The group of {@code replicas} in {@code slot}, created (with an id from {@code ids}) when there is none. */
    UUID groupFor(List<Integer> replicas, int slot, NewIds ids) {
        Key key = new Key(List.copyOf(replicas), slot);
        UUID existing = byKey.get(key);
        if (existing != null) {
            return existing;
        }
        UUID id = ids.next();
        byKey.put(key, id);
        byId.put(id, PartitionGroupRecord.newBuilder().setGroupId(TopicIds.toBytes(id))
                .addAllReplicaNodeIds(replicas).setSlot(slot).build());
        return id;
    }

    /** Forgets the groups not in {@code referenced}. */
    void retainOnly(Set<UUID> referenced) {
        byId.keySet().removeIf(id -> !referenced.contains(id));
        byKey.values().removeIf(id -> !referenced.contains(id));
    }

    /** Makes the groups {@code records} (a snapshot's); readers never see none in between. */
    void restore(List<PartitionGroupRecord> records) {
        byKey.clear();
        for (PartitionGroupRecord record : records) {
            UUID id = TopicIds.fromBytes(record.getGroupId());
            byId.put(id, record);
            byKey.put(new Key(List.copyOf(record.getReplicaNodeIdsList()), record.getSlot()), id);
        }
        retainOnly(Set.copyOf(byKey.values()));
    }

    Optional<PartitionGroupRecord> group(UUID id) {
        return Optional.ofNullable(byId.get(id));
    }

    /** Every group, by replica list (node by node, a shorter list first on a tie) and slot. */
    List<PartitionGroupRecord> all() {
        return byId.values().stream().sorted(BY_REPLICAS_AND_SLOT).toList();
    }
}
