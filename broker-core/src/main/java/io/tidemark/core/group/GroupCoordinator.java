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
import io.tidemark.proto.v1.ConsumerGroupState;
import io.tidemark.proto.v1.ErrorCode;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The consumer groups this broker coordinates ({@link ConsumerGroup} each). The coordinator of every group is the
 * ready leader of {@code __group_offsets}, where the groups' offsets are: a call on any other broker fails NOT_LEADER
 * naming it (NOT_AVAILABLE while a new leader gets ready), and this broker then forgets the groups it held, so a
 * coordinator that lost the leadership never answers from old state.
 *
 * <p>Membership is kept in {@code __group_offsets} too ({@link GroupStateFormat}): whenever a group's state changes
 * (a member joins, leaves, expires, subscribes anew, gives partitions up or takes them, moves to a new epoch), the
 * coordinator appends the group's whole state, and a heartbeat is answered once its change is stored. The broker that
 * coordinates next loads every group from there, its members' sessions starting at the load, so members carry on
 * with their ids, epochs and partitions: no rebalance. Each load takes a new writer id, stored with every state it
 * writes; a broker that finds the last state stored by another writer than itself since its load (it lost the
 * leadership and got it back meanwhile) loads again, and a failed append makes it forget the groups, so it never
 * answers from a state that is not the stored one. A state too large for one record of the topic is not appended:
 * that group goes back to what was stored last and the heartbeat that grew it fails GROUP_TOO_LARGE, touching no
 * other group. A group leaves memory with its last member, stored then with no
 * members. A group's sessions expire when any member of any group heartbeats or commits.
 *
 * <p>Thread-safe: one lock for every group. A heartbeat is short (no IO); an administrative change that needs the
 * group without members, or without subscribers of a topic, holds the lock while it writes, so no member joins in
 * between (one Raft round, rare).
 */
public final class GroupCoordinator {
    private static final Map<String, Supplier<Assignor>> ASSIGNORS = Map.of(UniformAssignor.NAME,
            UniformAssignor::new, RangeAssignor.NAME, RangeAssignor::new);

    private static final Logger LOG = LoggerFactory.getLogger(GroupCoordinator.class);
    /** How long an offsets expiry pass waits for the group changes appended before it to be stored. */
    private static final long WRITE_WAIT_MS = 30_000;

    private final Topics topics;
    private final GroupOffsetStore store;
    private final GroupSettings settings;
    private final InstantSource clock;
    private final Supplier<String> memberIds;
    private final Map<String, ConsumerGroup> groups = new HashMap<>();
    /** What was last stored of each group in {@link #groups}: a change that cannot be stored goes back to it. */
    private final Map<String, ConsumerGroupState> lastStored = new HashMap<>();
    /**
     * The cluster's topics as groups resolve subscriptions against them: the same map while they stay the same, so
     * a group does not match its members' patterns again on every heartbeat ({@link ConsumerGroup#heartbeat}).
     */
    private Map<String, Integer> existingTopics = Map.of();
    /** This broker's writer id since it last loaded the groups; null while it has not (or forgot them). */
    private String writerId;
    /** The offset of the last group state stored when this broker loaded the groups. */
    private long loadedOffset;
    /**
     * The writer id of an append that failed: the next call forgets the groups if it is still this broker's. Set
     * from the append's completion without the lock, which a thread waiting for an append may hold.
     */
    private volatile String failedWriter;
    /**
     * The last group state appended: appends keep their order, so once it is stored every change made before is
     * too.
     */
    private CompletableFuture<?> lastWrite = CompletableFuture.completedFuture(null);

    /**
     * How soon a member that has not reached its target is told to heartbeat again (at most the configured
     * interval): a member waiting for partitions that others give up learns they are free within this, not within
     * the interval (5 s by default), and so a rebalance takes about one interval instead of two.
     */
    static final long RECONCILING_HEARTBEAT_INTERVAL_MS = 250;

    /**
     * A heartbeat's answer, when the member is to heartbeat next, and the storing of the change it made (completed at
     * once when it made none): the member must hear the answer only once it completed.
     */
    public record Heartbeated(ConsumerGroup.Answer answer, long heartbeatIntervalMs, CompletableFuture<?> stored) {
    }

    /**
     * @param store     where the groups' states are stored and loaded from
     * @param memberIds gives each member that joins its id (random in a broker)
     */
    public GroupCoordinator(Topics topics, GroupOffsetStore store, GroupSettings settings, InstantSource clock,
                            Supplier<String> memberIds) {
        this.topics = topics;
        this.store = store;
        this.settings = settings;
        this.clock = clock;
        this.memberIds = memberIds;
    }

    /** A group's membership as {@code groups describe} shows it. */
    public record Membership(ConsumerGroup.State state, int groupEpoch, String assignor,
                             List<ConsumerGroup.MemberView> members) {
    }

    /** Work done while a group is in a given shape ({@link #whileEmpty}, {@link #whileUnsubscribed}). */
    @FunctionalInterface
    public interface GroupChange<T> {
        T run() throws InterruptedException, ExecutionException;
    }

    /** The coordinator's clock: members' last heartbeats are on it. */
    public long nowMs() {
        return clock.millis();
    }

    /**
     * Handles a member's heartbeat.
     *
     * @param assignorName the assignor a new group takes; empty for {@value UniformAssignor#NAME}
     * @throws TidemarkException NOT_LEADER/NOT_AVAILABLE when this broker does not coordinate groups now;
     *                           INVALID_REQUEST for an unknown assignor or a new group beyond group.max.count
     *                           ({@link GroupOffsetStore#checkRoomFor}); GROUP_TOO_LARGE for a join beyond
     *                           group.consumer.max.size; and what {@link ConsumerGroup#heartbeat} throws. The stored
     *                           future fails GROUP_TOO_LARGE when the change would make the group's state larger than
     *                           a record of the topic takes: the group is then as it was stored last.
     */
    public synchronized Heartbeated heartbeat(String groupId, ConsumerGroup.Heartbeat heartbeat,
                                              String assignorName) {
        checkCoordinator();
        long nowMs = clock.millis();
        expireSessions(nowMs);
        ConsumerGroup group = groups.get(groupId);
        if (group == null) {
            store.checkRoomFor(groupId, settings.maxCount());
            group = new ConsumerGroup(groupId, assignor(assignorName), settings.sessionTimeoutMs(), memberIds);
        }
        if (group.size() >= settings.maxSize() && group.addsMember(heartbeat)) {
            throw new TidemarkException(ErrorCode.GROUP_TOO_LARGE, "group " + groupId + " has " + group.size()
                    + " members, the most group.consumer.max.size allows");
        }
        long changes = group.changes();
        ConsumerGroup.Answer answer = group.heartbeat(heartbeat, existingTopics(), nowMs);
        keep(group);
        long intervalMs = group.reconciling(answer.memberId())
                ? Math.min(settings.heartbeatIntervalMs(), RECONCILING_HEARTBEAT_INTERVAL_MS)
                : settings.heartbeatIntervalMs();
        return new Heartbeated(answer, intervalMs, group.changes() == changes
                ? CompletableFuture.completedFuture(null) : store(group));
    }

    /**
     * Checks that a commit of {@code partitions} to {@code groupId} may be stored: every commit must come to the
     * coordinator, which alone knows the members; a member's at the member's epoch, for partitions it owns; one
     * without a member id only while the group has no member.
     *
     * @throws TidemarkException NOT_LEADER/NOT_AVAILABLE on another broker; UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH,
     *                           NON_EMPTY_GROUP
     */
    public synchronized void checkCommit(String groupId, String memberId, int memberEpoch,
                                         Set<TopicPartition> partitions) {
        checkCoordinator();
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

    /**
     * The group's membership now: {@link ConsumerGroup.State#EMPTY} with no members for a group this coordinator does
     * not hold.
     *
     * @throws TidemarkException NOT_LEADER/NOT_AVAILABLE when this broker does not coordinate groups now
     */
    public synchronized Membership membership(String groupId) {
        checkCoordinator();
        expireSessions(clock.millis());
        ConsumerGroup group = groups.get(groupId);
        return group == null ? new Membership(ConsumerGroup.State.EMPTY, 0, "", List.of())
                : new Membership(group.state(), group.groupEpoch(), group.assignorName(), group.members());
    }

    /**
     * Runs {@code change} if the group has no members, holding them off until it is done.
     *
     * @param what what the change does, for the error
     * @throws TidemarkException NON_EMPTY_GROUP naming the members' count; NOT_LEADER/NOT_AVAILABLE
     */
    public synchronized <T> T whileEmpty(String groupId, String what, GroupChange<T> change)
            throws InterruptedException, ExecutionException {
        checkCoordinator();
        expireSessions(clock.millis());
        ConsumerGroup group = groups.get(groupId);
        if (group != null) {
            throw new TidemarkException(ErrorCode.NON_EMPTY_GROUP, "group " + groupId + " has " + group.size()
                    + " member(s): " + what + " only a group without members; stop them, or wait for their "
                    + "sessions to expire");
        }
        return change.run();
    }

    /**
     * Runs {@code change} if no member of the group subscribes to any of {@code topics}, holding members off until
     * it is done.
     *
     * @throws TidemarkException GROUP_SUBSCRIBED_TO_TOPIC naming the topic and a member; NOT_LEADER/NOT_AVAILABLE
     */
    public synchronized <T> T whileUnsubscribed(String groupId, Collection<String> topics, GroupChange<T> change)
            throws InterruptedException, ExecutionException {
        checkCoordinator();
        expireSessions(clock.millis());
        ConsumerGroup group = groups.get(groupId);
        if (group != null) {
            for (String topic : topics) {
                Optional<String> member = group.subscriber(topic);
                if (member.isPresent()) {
                    throw new TidemarkException(ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, "member " + member.get()
                            + " of group " + groupId + " subscribes to topic " + topic + ": its offsets are in use");
                }
            }
        }
        return change.run();
    }

    /**
     * Deletes every group without members whose last commit and last membership change are older than
     * {@code offsets.retention.minutes} (its offsets and stored membership, {@link GroupOffsetStore#deleteGroup}).
     * Does nothing on a broker that does not coordinate. A group's membership change is read from the stored log,
     * so this first waits for the changes appended before, its own expired sessions last: a group whose last member
     * left just now is active now, not idle since its last commit (before, on the production partition, whose
     * appends complete after the pass read the log, a group lost its offsets in the pass its last session expired).
     * A pass whose changes were not stored within {@link #WRITE_WAIT_MS} deletes nothing.
     *
     * @return the groups deleted
     */
    public synchronized List<String> expireOffsets() throws InterruptedException, ExecutionException {
        if (!coordinates()) {
            return List.of();
        }
        long nowMs = clock.millis();
        expireSessions(nowMs);
        try {
            lastWrite.get(WRITE_WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            LOG.info("No consumer group deleted for offsets.retention.minutes in this pass: a membership change was "
                    + "not stored within {} ms ({})", WRITE_WAIT_MS, e.toString());
            return List.of();
        }
        List<String> expired = new ArrayList<>();
        for (Map.Entry<String, Long> group : store.lastActivityMs().entrySet()) {
            if (!groups.containsKey(group.getKey()) && nowMs - group.getValue() >= settings.offsetsRetentionMs()) {
                store.deleteGroup(group.getKey());
                expired.add(group.getKey());
            }
        }
        if (!expired.isEmpty()) {
            LOG.info("Deleted {} consumer group(s) without members and idle for offsets.retention.minutes: {}",
                    expired.size(), expired);
        }
        return expired;
    }

    private void checkCoordinator() {
        try {
            topics.partition(GroupOffsetStore.TOPIC, 0).checkClientReadable();
        } catch (TidemarkException e) {
            forget();
            throw e;
        }
        if (writerId != null && writerId.equals(failedWriter)) {
            forget();
        }
        if (writerId == null) {
            store.reload();
        }
        GroupOffsetStore.LastGroupState last = store.lastGroupState();
        if (writerId == null || (!last.writerId().equals(writerId) && last.offset() != loadedOffset)) {
            load(last);
        }
    }

    /** Takes every group with members from the stored states, each member heard from now. */
    private void load(GroupOffsetStore.LastGroupState last) {
        groups.clear();
        lastStored.clear();
        long nowMs = clock.millis();
        store.groupStates().forEach((groupId, state) -> {
            if (state.getMembersCount() > 0) {
                groups.put(groupId, ConsumerGroup.restore(groupId, state, storedAssignor(groupId, state),
                        settings.sessionTimeoutMs(), memberIds, nowMs));
                lastStored.put(groupId, state);
            }
        });
        writerId = UUID.randomUUID().toString();
        loadedOffset = last.offset();
        LOG.info("Coordinating consumer groups: loaded {} with members from {} (last group state at offset {})",
                groups.size(), GroupOffsetStore.TOPIC, last.offset());
    }

    private void forget() {
        groups.clear();
        lastStored.clear();
        writerId = null;
        lastWrite = CompletableFuture.completedFuture(null);
    }

    /** Holds the group while it has members; one without is stored so and leaves memory. */
    private void keep(ConsumerGroup group) {
        if (group.hasMembers()) {
            groups.put(group.groupId(), group);
        } else {
            groups.remove(group.groupId());
            lastStored.remove(group.groupId());
        }
    }

    /**
     * Appends the group's state. A state too large for a record of the topic is not appended: the group goes back to
     * what was stored last (a new group leaves memory) and the future fails GROUP_TOO_LARGE, touching no other group.
     * When the append fails, its outcome is unknown (it may still be stored, by a leader this broker no longer is):
     * this broker forgets the groups, so the next call loads them from what is stored.
     */
    private CompletableFuture<?> store(ConsumerGroup group) {
        String writer = writerId;
        ConsumerGroupState state = group.stored().toBuilder().setWriterId(writer).build();
        CompletableFuture<?> append;
        try {
            append = store.writeGroupState(group.groupId(), state,
                    topics.topic(GroupOffsetStore.TOPIC).config().maxBatchBytes());
            if (group.hasMembers()) {
                lastStored.put(group.groupId(), state);
            }
        } catch (TidemarkException e) {
            if (e.code() != ErrorCode.GROUP_TOO_LARGE) {
                append = CompletableFuture.failedFuture(e);
            } else {
                LOG.warn("Consumer group {} not changed: {}", group.groupId(), e.getMessage());
                ConsumerGroupState stored = lastStored.get(group.groupId());
                if (stored == null) {
                    groups.remove(group.groupId());
                } else {
                    keep(group.revertedTo(stored));
                }
                return CompletableFuture.failedFuture(e);
            }
        } catch (RuntimeException e) {
            append = CompletableFuture.failedFuture(e);
        }
        lastWrite = append;
        return append.whenComplete((stored, failure) -> {
            if (failure != null) {
                LOG.warn("Could not store the state of consumer group {}; forgetting the groups: {}",
                        group.groupId(), failure.toString());
                failedWriter = writer;
            }
        });
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
        List<ConsumerGroup> expired = new ArrayList<>();
        groups.values().removeIf(group -> {
            long changes = group.changes();
            group.expire(nowMs);
            if (group.changes() != changes) {
                expired.add(group);
            }
            if (!group.hasMembers()) {
                lastStored.remove(group.groupId());
                return true;
            }
            return false;
        });
        expired.forEach(this::store);
    }

    /** The cluster's topics that groups subscribe to: the same map as the last call's while they are the same. */
    private Map<String, Integer> existingTopics() {
        Map<String, Integer> existing = new TreeMap<>();
        for (Topic topic : topics.topics()) {
            if (!topic.internal()) {
                existing.put(topic.name(), topic.partitions().size());
            }
        }
        if (!existing.equals(existingTopics)) {
            existingTopics = Collections.unmodifiableMap(existing);
        }
        return existingTopics;
    }

    /**
     * The assignor a stored group names; the default one for a name this broker does not know (stored by a newer
     * broker, or a bug), so that the group, and every other, still loads: its members keep their partitions until its
     * next rebalance, which the default assignor computes.
     */
    private static Assignor storedAssignor(String groupId, ConsumerGroupState state) {
        if (!state.getAssignor().isEmpty() && !ASSIGNORS.containsKey(state.getAssignor())) {
            LOG.warn("Consumer group {} was stored with assignor '{}', which this broker does not know (it knows {}): "
                    + "it rebalances with {} from now on", groupId, state.getAssignor(),
                    new TreeMap<>(ASSIGNORS).keySet(), UniformAssignor.NAME);
            return new UniformAssignor();
        }
        return assignor(state.getAssignor());
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
