package io.tidemark.core.group;

import io.tidemark.core.config.BrokerConfig.GroupSettings;
import io.tidemark.core.group.membership.Assignor;
import io.tidemark.core.group.membership.ConsumerGroup;
import io.tidemark.core.group.membership.RangeAssignor;
import io.tidemark.core.group.membership.UniformAssignor;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.topic.Topic;
import io.tidemark.core.topic.Topics;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.time.InstantSource;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * The consumer groups this broker coordinates ({@link ConsumerGroup} each). The coordinator of every group is the
 * ready leader of {@code __group_offsets}, where the groups' offsets are: a call on any other broker fails NOT_LEADER
 * naming it (NOT_AVAILABLE while a new leader gets ready), and this broker then forgets the groups it held, so a
 * coordinator that lost the leadership never answers from old state.
 *
 * <p>Membership lives in this broker's memory only (issue 12's next step keeps it in {@code __group_offsets}): when
 * the coordinator moves, members are told UNKNOWN_MEMBER_ID by the new one, join again and the group rebalances. A
 * group is dropped once its last member is gone. A group's sessions expire when any member of any group heartbeats or
 * commits.
 *
 * <p>Thread-safe: one lock for every group (a heartbeat is short: no IO).
 */
public final class GroupCoordinator {
    private static final Map<String, Supplier<Assignor>> ASSIGNORS = Map.of(UniformAssignor.NAME,
            UniformAssignor::new, RangeAssignor.NAME, RangeAssignor::new);

    private final Topics topics;
    private final GroupSettings settings;
    private final InstantSource clock;
    private final Supplier<String> memberIds;
    private final Map<String, ConsumerGroup> groups = new HashMap<>();

    /** @param memberIds gives each member that joins its id (random in a broker) */
    public GroupCoordinator(Topics topics, GroupSettings settings, InstantSource clock, Supplier<String> memberIds) {
        this.topics = topics;
        this.settings = settings;
        this.clock = clock;
        this.memberIds = memberIds;
    }

    /** How often members are told to heartbeat. */
    public long heartbeatIntervalMs() {
        return settings.heartbeatIntervalMs();
    }

    /**
     * Handles a member's heartbeat.
     *
     * @param assignorName the assignor a new group takes; empty for {@value UniformAssignor#NAME}
     * @throws TidemarkException NOT_LEADER/NOT_AVAILABLE when this broker does not coordinate groups now;
     *                           INVALID_REQUEST for an unknown assignor or a join beyond group.consumer.max.size; and
     *                           what {@link ConsumerGroup#heartbeat} throws
     */
    public synchronized ConsumerGroup.Answer heartbeat(String groupId, ConsumerGroup.Heartbeat heartbeat,
                                                       String assignorName) {
        checkCoordinator();
        long nowMs = clock.millis();
        expireSessions(nowMs);
        ConsumerGroup group = groups.get(groupId);
        if (group == null) {
            group = new ConsumerGroup(groupId, assignor(assignorName), settings.sessionTimeoutMs(), memberIds);
        }
        if (group.size() >= settings.maxSize() && group.addsMember(heartbeat)) {
            throw new TidemarkException(ErrorCode.INVALID_REQUEST, "group " + groupId + " has " + group.size()
                    + " members, the most group.consumer.max.size allows");
        }
        ConsumerGroup.Answer answer = group.heartbeat(heartbeat, existingTopics(), nowMs);
        if (group.hasMembers()) {
            groups.put(groupId, group);
        } else {
            groups.remove(groupId);
        }
        return answer;
    }

    /**
     * Checks that a commit of {@code partitions} to {@code groupId} may be stored: a member's must come to the
     * coordinator, at the member's epoch, for partitions it owns; one without a member id only while the group has no
     * member, which only the coordinator knows (another broker takes it unchecked).
     *
     * @throws TidemarkException NOT_LEADER/NOT_AVAILABLE for a member's commit on another broker; UNKNOWN_MEMBER_ID,
     *                           STALE_MEMBER_EPOCH
     */
    public synchronized void checkCommit(String groupId, String memberId, int memberEpoch,
                                         Set<TopicPartition> partitions) {
        if (!memberId.isEmpty()) {
            checkCoordinator();
        } else if (!coordinates()) {
            return;
        }
        expireSessions(clock.millis());
        ConsumerGroup group = groups.get(groupId);
        if (group == null && !memberId.isEmpty()) {
            throw new TidemarkException(ErrorCode.UNKNOWN_MEMBER_ID, "group " + groupId + " has no member "
                    + memberId + " (no member at all on its coordinator): join again with epoch "
                    + ConsumerGroup.JOIN_EPOCH);
        }
        if (group != null) {
            group.checkCommit(memberId, memberEpoch, partitions);
        }
    }

    private void checkCoordinator() {
        try {
            topics.partition(GroupOffsetStore.TOPIC, 0).checkClientReadable();
        } catch (TidemarkException e) {
            groups.clear();
            throw e;
        }
    }

    /** Whether this broker coordinates groups now; forgets the groups it held when it does not. */
    private boolean coordinates() {
        try {
            checkCoordinator();
            return true;
        } catch (TidemarkException e) {
            return false;
        }
    }

    private void expireSessions(long nowMs) {
        groups.values().removeIf(group -> {
            group.expire(nowMs);
            return !group.hasMembers();
        });
    }

    private Map<String, Integer> existingTopics() {
        Map<String, Integer> existing = new TreeMap<>();
        for (Topic topic : topics.topics()) {
            if (!topic.internal()) {
                existing.put(topic.name(), topic.partitions().size());
            }
        }
        return existing;
    }

    private static Assignor assignor(String name) {
        Supplier<Assignor> assignor = ASSIGNORS.get(name.isEmpty() ? UniformAssignor.NAME : name);
        if (assignor == null) {
            throw new TidemarkException(ErrorCode.INVALID_REQUEST, "assignor '" + name + "' is not known; allowed: "
                    + String.join(", ", new TreeMap<>(ASSIGNORS).keySet()));
        }
        return assignor.get();
    }
}
