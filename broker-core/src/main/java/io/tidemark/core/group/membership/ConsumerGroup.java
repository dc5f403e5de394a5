package io.tidemark.core.group.membership;

import com.google.re2j.Pattern;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ConsumerGroupState;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupMemberState;
import io.tidemark.proto.v1.MemberTarget;
import io.tidemark.proto.v1.TopicPartitionCount;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * The membership of one consumer group, as its coordinator keeps it: the consumer-group protocol of Kafka's KIP-848,
 * driven by heartbeats. The coordinator computes the assignment; members never assign themselves.
 *
 * <ul>
 *   <li><b>Epochs.</b> The group epoch moves whenever what the assignment depends on changes: a member joins, leaves
 *       or expires, a subscription changes, a subscribed topic appears or grows. The {@link Assignor} then computes
 *       the target assignment for that epoch. Each member has its own epoch, which reaches the target's once the member
 *       has given up what the target takes from it.</li>
 *   <li><b>Revoke before assign.</b> A member that owns partitions the target gives to others is first asked to give
 *       them up (its answer keeps only the rest; its epoch stays) and keeps owning them until a heartbeat no longer
 *       lists them, or it leaves, or its session expires. Only then may another member get them: a partition is never
 *       owned by two members at once, so two members never read it at the same time.</li>
 *   <li><b>Sessions.</b> A member that has not heartbeated for {@code session.timeout.ms} is removed and its
 *       partitions are free again. A static member ({@code group.instance.id}) that leaves with epoch
 *       {@value #STATIC_LEAVE_EPOCH} keeps its partitions until then; a member that joins with the same instance id
 *       within the session takes them over, and its epoch, without a rebalance. The member it replaced is unknown from
 *       then on (a zombie is fenced).</li>
 *   <li><b>Fenced commits.</b> {@link #checkCommit} refuses a commit from an unknown member, from a stale epoch, or for
 *       a partition the member does not own (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH); a commit without a member (a
 *       consumer using {@code assign()}, or {@code groups reset-offsets}) only while the group has no members
 *       (NON_EMPTY_GROUP).</li>
 * </ul>
 *
 * <p>Deterministic: the same calls with the same times and member ids give the same state. {@link #stored} is all of
 * it but the times members were last heard from, for the coordinator to store, and {@link #restore} builds the group
 * again from it (on the next coordinator), every member heard from at the restore; {@link #changes} counts the changes
 * of what {@link #stored} holds, so the coordinator stores only a changed group. Not thread-safe: the coordinator
 * calls it from one thread (per group).
 */
public final class ConsumerGroup {
    /** The epoch a member sends to join. */
    public static final int JOIN_EPOCH = 0;
    /** The epoch a member sends to leave for good: its partitions are reassigned at once. */
    public static final int LEAVE_EPOCH = -1;
    /** The epoch a static member sends to leave meaning to come back within its session. */
    public static final int STATIC_LEAVE_EPOCH = -2;

    /**
     * A heartbeat: what a member says about itself.
     *
     * @param memberId     empty to join
     * @param memberEpoch  {@link #JOIN_EPOCH}, {@link #LEAVE_EPOCH}, {@link #STATIC_LEAVE_EPOCH} or the epoch it has
     * @param instanceId   its {@code group.instance.id}, or null
     * @param host         where the heartbeat came from (host:port), shown by {@code groups describe}
     * @param topics       the topics it subscribes to by name; null (with {@code pattern} null) when its
     *                     subscription is unchanged since its last heartbeat
     * @param pattern      a pattern whose fully matching topics it subscribes to, or null: RE2/J, linear in the
     *                     topic name's length whatever the pattern, so no pattern can stall the coordinator
     * @param owned        the partitions it owns now; null when unchanged since its last heartbeat
     */
    public record Heartbeat(String memberId, int memberEpoch, String instanceId, String clientId, String host,
                            Set<String> topics, Pattern pattern, Set<TopicPartition> owned) {
    }

    /** The coordinator's answer: the member's id and epoch, and the partitions it should own now. */
    public record Answer(String memberId, int memberEpoch, Set<TopicPartition> assignment) {
    }

    /**
     * A member as {@code groups describe} shows it.
     *
     * @param topics  the topics it subscribes to by name, in name order
     * @param pattern the pattern it subscribes with, if any
     */
    public record MemberView(String memberId, Optional<String> instanceId, String clientId, String host,
                             int memberEpoch, Set<String> topics, Optional<String> pattern,
                             Set<TopicPartition> assignment, Set<TopicPartition> revoking, long lastHeartbeatMs) {
    }

    /** Where the group is in reaching its target assignment. */
    public enum State {
        /** No members. */
        EMPTY,
        /** A member has not reached the target yet: it has partitions to give up, or to take once they are free. */
        RECONCILING,
        /** Every member is at the target epoch and owns exactly what the target gives it. */
        STABLE
    }

    private final String groupId;
    private final Assignor assignor;
    private final long sessionTimeoutMs;
    private final Supplier<String> memberIds;
    private final Map<String, GroupMember> members = new TreeMap<>();
    private int groupEpoch;
    private int targetEpoch;
    private Map<String, Set<TopicPartition>> target = Map.of();
    private Map<String, Set<String>> targetSubscriptions = Map.of();
    private Map<String, Integer> targetPartitions = Map.of();
    private long changes;
    /** How many times a member joined, left or changed its subscription: what the subscriptions depend on. */
    private long subscriptionChanges;
    /**
     * The topics map and the {@link #subscriptionChanges} the target was last checked against ({@link #updateTarget}):
     * while both are the same, so are the subscriptions, and a heartbeat skips walking every member's topics (with
     * 200 members matching 300 topics, 60,000 names a heartbeat, under the coordinator's lock).
     */
    private Map<String, Integer> checkedTopics;
    private long checkedAtSubscriptionChanges = -1;

    /**
     * @param memberIds gives a new member its id (random in a broker, scripted in tests)
     */
    public ConsumerGroup(String groupId, Assignor assignor, long sessionTimeoutMs, Supplier<String> memberIds) {
        this.groupId = groupId;
        this.assignor = assignor;
        this.sessionTimeoutMs = sessionTimeoutMs;
        this.memberIds = memberIds;
    }

    /**
     * The group as a coordinator stored it ({@link #stored}), every member heard from at {@code nowMs}: the next
     * coordinator carries on with the same members, epochs and assignment.
     *
     * @param assignor the assignor the state names
     */
    public static ConsumerGroup restore(String groupId, ConsumerGroupState state, Assignor assignor,
                                        long sessionTimeoutMs, Supplier<String> memberIds, long nowMs) {
        ConsumerGroup group = new ConsumerGroup(groupId, assignor, sessionTimeoutMs, memberIds);
        group.groupEpoch = state.getGroupEpoch();
        group.targetEpoch = state.getTargetEpoch();
        for (GroupMemberState member : state.getMembersList()) {
            group.members.put(member.getMemberId(), GroupMember.restored(member, nowMs));
        }
        Map<String, Integer> partitions = new TreeMap<>();
        state.getTargetPartitionsList().forEach(t -> partitions.put(t.getTopic(), t.getPartitions()));
        group.targetPartitions = partitions;
        Map<String, Set<TopicPartition>> target = new HashMap<>();
        Map<String, Set<String>> subscriptions = new TreeMap<>();
        for (MemberTarget member : state.getTargetList()) {
            target.put(member.getMemberId(), new HashSet<>(PartitionRefs.partitions(member.getPartitionsList())));
            GroupMember subscriber = group.members.get(member.getMemberId());
            subscriptions.put(member.getMemberId(), subscriber == null ? Set.of()
                    : new TreeSet<>(subscriber.subscribedTopics(partitions)));
        }
        group.target = target;
        group.targetSubscriptions = subscriptions;
        return group;
    }

    /**
     * The group as it was stored ({@code state}, the last {@link #stored} of it), with the members it had then heard
     * from when this one last heard from them: a change that could not be stored, undone.
     */
    public ConsumerGroup revertedTo(ConsumerGroupState state) {
        ConsumerGroup reverted = restore(groupId, state, assignor, sessionTimeoutMs, memberIds, 0);
        reverted.members.values().forEach(m -> {
            GroupMember current = members.get(m.memberId());
            m.heardAt(current == null ? 0 : current.lastHeartbeatMs());
        });
        return reverted;
    }

    /**
     * What a coordinator stores of the group: all but when it last heard from each member, and the topics each
     * member's subscription took when the target was computed: {@link #restore} finds them again among the target's
     * topics (a member's subscription cannot have changed since, as a change computes a new target at once; a member
     * that joined or left since moved the group epoch past the target's, so the next heartbeat computes anew anyway).
     */
    public ConsumerGroupState stored() {
        ConsumerGroupState.Builder state = ConsumerGroupState.newBuilder().setAssignor(assignor.name())
                .setGroupEpoch(groupEpoch).setTargetEpoch(targetEpoch);
        members.values().forEach(m -> state.addMembers(m.state()));
        new TreeMap<>(targetSubscriptions).keySet().forEach(memberId -> state.addTarget(MemberTarget.newBuilder()
                .setMemberId(memberId).addAllPartitions(PartitionRefs.refs(target.getOrDefault(memberId, Set.of())))));
        new TreeMap<>(targetPartitions).forEach((topic, count) -> state.addTargetPartitions(TopicPartitionCount
                .newBuilder().setTopic(topic).setPartitions(count)));
        return state.build();
    }

    /** How many times what {@link #stored} holds has changed: a coordinator stores the group when it moved. */
    public long changes() {
        return changes;
    }

    public String groupId() {
        return groupId;
    }

    public int groupEpoch() {
        return groupEpoch;
    }

    /**
     * Handles a member's heartbeat at {@code nowMs}, against the topics that exist now.
     *
     * @param topics every topic of the cluster and its partition count; not changed once passed (a caller passes
     *               another map when the topics change: the group keeps what it resolved against this one)
     * @throws TidemarkException UNKNOWN_MEMBER_ID for a member the group does not have, STALE_MEMBER_EPOCH for an epoch
     *                           the member has moved past, INVALID_REQUEST for a static leave without an instance id
     */
    public Answer heartbeat(Heartbeat heartbeat, Map<String, Integer> topics, long nowMs) {
        expire(nowMs);
        GroupMember member;
        switch (heartbeat.memberEpoch()) {
            case JOIN_EPOCH -> member = join(heartbeat);
            case LEAVE_EPOCH -> {
                remove(known(heartbeat.memberId()));
                return new Answer(heartbeat.memberId(), LEAVE_EPOCH, Set.of());
            }
            case STATIC_LEAVE_EPOCH -> {
                GroupMember leaving = known(heartbeat.memberId());
                if (leaving.instanceId().isEmpty()) {
                    throw new TidemarkException(ErrorCode.INVALID_REQUEST, "member " + leaving.memberId() + " of group "
                            + groupId + " has no group.instance.id: only a static member leaves with epoch "
                            + STATIC_LEAVE_EPOCH + "; others leave with " + LEAVE_EPOCH);
                }
                return new Answer(leaving.memberId(), STATIC_LEAVE_EPOCH, Set.of());
            }
            default -> member = current(heartbeat);
        }
        if (member.heardFrom(nowMs, heartbeat.host())) {
            changes++;
        }
        boolean subscribing = heartbeat.topics() != null || heartbeat.pattern() != null;
        if (subscribing && member.subscribe(heartbeat.topics() == null ? Set.of() : heartbeat.topics(),
                heartbeat.pattern())) {
            groupEpoch++;
            subscriptionChanges++;
            changes++;
        }
        if (heartbeat.owned() != null && member.reportOwned(heartbeat.owned())) {
            changes++;
        }
        updateTarget(topics);
        reconcile(member);
        return new Answer(member.memberId(), member.epoch(), sorted(member.assignment()));
    }

    /** Removes the members whose session expired by {@code nowMs}; their partitions are free again. */
    public void expire(long nowMs) {
        List<GroupMember> expired = new ArrayList<>();
        for (GroupMember member : members.values()) {
            if (nowMs - member.lastHeartbeatMs() >= sessionTimeoutMs) {
                expired.add(member);
            }
        }
        expired.forEach(this::remove);
    }

    /**
     * Checks that a commit of {@code partitions} may be stored: from a member of the group at its current epoch that
     * owns them, or with no member ({@code memberId} empty) while the group has none.
     *
     * @throws TidemarkException UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH or NON_EMPTY_GROUP, naming what was wrong
     */
    public void checkCommit(String memberId, int memberEpoch, Set<TopicPartition> partitions) {
        if (memberId.isEmpty()) {
            if (!members.isEmpty()) {
                throw new TidemarkException(ErrorCode.NON_EMPTY_GROUP, "group " + groupId + " has " + members.size()
                        + " member(s): a commit without a member id is taken only while the group has none");
            }
            return;
        }
        GroupMember member = known(memberId);
        if (memberEpoch != member.epoch()) {
            throw stale(member, memberEpoch);
        }
        for (TopicPartition tp : partitions) {
            if (!member.owned().contains(tp)) {
                throw new TidemarkException(ErrorCode.STALE_MEMBER_EPOCH, "member " + memberId + " of group "
                        + groupId + " does not own " + tp + " (epoch " + memberEpoch + "): its commit is refused");
            }
        }
    }

    /** Whether the group has members (live, or static ones that left within their session). */
    public boolean hasMembers() {
        return !members.isEmpty();
    }

    /** Whether a join of {@code heartbeat} adds a member, rather than a static member taking over its instance's. */
    public boolean addsMember(Heartbeat heartbeat) {
        return heartbeat.memberEpoch() == JOIN_EPOCH && (heartbeat.instanceId() == null || members.values().stream()
                .noneMatch(m -> heartbeat.instanceId().equals(m.instanceId().orElse(null))));
    }

    public int size() {
        return members.size();
    }

    public String assignorName() {
        return assignor.name();
    }

    public State state() {
        if (members.isEmpty()) {
            return State.EMPTY;
        }
        return members.keySet().stream().anyMatch(this::reconciling) ? State.RECONCILING : State.STABLE;
    }

    /**
     * Whether the member has not reached its target yet: it has partitions to give up, partitions of its target that
     * others still own, or an older epoch. False for a member the group does not have.
     */
    public boolean reconciling(String memberId) {
        GroupMember member = members.get(memberId);
        return member != null && (member.epoch() != targetEpoch || !member.revoking().isEmpty()
                || !member.owned().equals(target.getOrDefault(memberId, Set.of())));
    }

    /** A member subscribing to {@code topic}, by name or by pattern, if there is one. */
    public Optional<String> subscriber(String topic) {
        return members.values().stream().filter(m -> m.subscribes(topic)).map(GroupMember::memberId).findFirst();
    }

    /** The members in member-id order. */
    public List<MemberView> members() {
        List<MemberView> views = new ArrayList<>();
        for (GroupMember m : members.values()) {
            views.add(new MemberView(m.memberId(), m.instanceId(), m.clientId(), m.host(), m.epoch(),
                    new TreeSet<>(m.topics()), m.pattern(), sorted(m.assignment()),
                    sorted(m.revoking()), m.lastHeartbeatMs()));
        }
        return views;
    }

    /** Which member owns each owned partition; for checks that no partition has two owners. */
    public Map<TopicPartition, List<String>> owners() {
        Map<TopicPartition, List<String>> owners = new TreeMap<>(Assignor.PARTITION_ORDER);
        members.values().forEach(m -> m.owned().forEach(tp ->
                owners.computeIfAbsent(tp, p -> new ArrayList<>()).add(m.memberId())));
        return owners;
    }

    private GroupMember join(Heartbeat heartbeat) {
        String memberId = memberIds.get();
        if (heartbeat.instanceId() != null) {
            for (Iterator<GroupMember> it = members.values().iterator(); it.hasNext(); ) {
                GroupMember previous = it.next();
                if (heartbeat.instanceId().equals(previous.instanceId().orElse(null))) {
                    it.remove();
                    GroupMember member = GroupMember.replacing(previous, memberId, heartbeat.clientId());
                    members.put(memberId, member);
                    replaceInTarget(previous.memberId(), memberId);
                    subscriptionChanges++;
                    changes++;
                    return member;
                }
            }
        }
        GroupMember member = new GroupMember(memberId, heartbeat.instanceId(), heartbeat.clientId());
        members.put(memberId, member);
        subscriptionChanges++;
        changes++;
        return member;
    }

    private void replaceInTarget(String previousId, String memberId) {
        target = renamed(target, previousId, memberId);
        targetSubscriptions = renamed(targetSubscriptions, previousId, memberId);
    }

    private static <V> Map<String, V> renamed(Map<String, V> map, String from, String to) {
        Map<String, V> copy = new HashMap<>(map);
        V value = copy.remove(from);
        if (value != null) {
            copy.put(to, value);
        }
        return copy;
    }

    private GroupMember current(Heartbeat heartbeat) {
        GroupMember member = known(heartbeat.memberId());
        int epoch = heartbeat.memberEpoch();
        boolean answerLost = epoch == member.previousEpoch() && heartbeat.owned() != null
                && member.owned().containsAll(heartbeat.owned());
        if (epoch != member.epoch() && !answerLost) {
            throw stale(member, epoch);
        }
        return member;
    }

    private GroupMember known(String memberId) {
        GroupMember member = members.get(memberId);
        if (member == null) {
            throw new TidemarkException(ErrorCode.UNKNOWN_MEMBER_ID, "group " + groupId + " has no member "
                    + memberId + " (it left, its session of " + sessionTimeoutMs + " ms expired, or a member with its "
                    + "group.instance.id replaced it): join again with epoch " + JOIN_EPOCH);
        }
        return member;
    }

    private TidemarkException stale(GroupMember member, int epoch) {
        return new TidemarkException(ErrorCode.STALE_MEMBER_EPOCH, "member " + member.memberId() + " of group "
                + groupId + " sent epoch " + epoch + " but is at epoch " + member.epoch());
    }

    private void remove(GroupMember member) {
        members.remove(member.memberId());
        groupEpoch++;
        subscriptionChanges++;
        changes++;
    }

    /**
     * Computes the target assignment again when the group epoch or the subscribed topics moved since the last; skips
     * the check while neither the topics map nor the members' subscriptions changed since the last one.
     */
    private void updateTarget(Map<String, Integer> topics) {
        if (topics == checkedTopics && subscriptionChanges == checkedAtSubscriptionChanges) {
            return;
        }
        computeTarget(topics);
        checkedTopics = topics;
        checkedAtSubscriptionChanges = subscriptionChanges;
    }

    private void computeTarget(Map<String, Integer> topics) {
        Map<String, Set<String>> subscriptions = new TreeMap<>();
        Map<String, Integer> partitions = new TreeMap<>();
        for (GroupMember member : members.values()) {
            Set<String> subscribed = member.subscribedTopics(topics);
            subscriptions.put(member.memberId(), subscribed);
            subscribed.forEach(topic -> partitions.put(topic, topics.get(topic)));
        }
        if (groupEpoch == targetEpoch && subscriptions.equals(targetSubscriptions)
                && partitions.equals(targetPartitions)) {
            return;
        }
        if (groupEpoch == targetEpoch) {
            groupEpoch++;
        }
        target = assignor.assign(subscriptions, partitions, target);
        targetEpoch = groupEpoch;
        targetSubscriptions = subscriptions;
        targetPartitions = partitions;
        changes++;
    }

    /**
     * Moves a member towards its target: first asks it to give up what the target takes from it; once it owns nothing
     * else, moves it to the target epoch and gives it the target's partitions that no other member owns (the others
     * come with later heartbeats, once released).
     */
    private void reconcile(GroupMember member) {
        if (!member.revoking().isEmpty()) {
            return;
        }
        Set<TopicPartition> wanted = target.getOrDefault(member.memberId(), Set.of());
        for (TopicPartition tp : member.owned()) {
            if (!wanted.contains(tp)) {
                member.revoking().add(tp);
            }
        }
        if (!member.revoking().isEmpty()) {
            changes++;
            return;
        }
        if (member.moveToEpoch(targetEpoch)) {
            changes++;
        }
        Set<TopicPartition> ownedByOthers = new HashSet<>();
        members.values().forEach(m -> {
            if (m != member) {
                ownedByOthers.addAll(m.owned());
            }
        });
        for (TopicPartition tp : wanted) {
            if (!ownedByOthers.contains(tp) && member.owned().add(tp)) {
                changes++;
            }
        }
    }

    private static Set<TopicPartition> sorted(Set<TopicPartition> partitions) {
        Set<TopicPartition> sorted = new TreeSet<>(Assignor.PARTITION_ORDER);
        sorted.addAll(partitions);
        return sorted;
    }
}
