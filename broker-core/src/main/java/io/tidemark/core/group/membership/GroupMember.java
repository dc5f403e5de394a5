package io.tidemark.core.group.membership;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.v1.GroupMemberState;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collections;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * A member of a {@link ConsumerGroup} as the coordinator tracks it: who it is, what it subscribes to, its epoch, the
 * partitions it owns (given to it and not yet released) and, among them, those it was asked to give up.
 *
 * <p>Not thread-safe: owned by its group.
 */
final class GroupMember {
    private static final Logger LOG = LoggerFactory.getLogger(GroupMember.class);

    private final String memberId;
    private final String instanceId;
    private final String clientId;
    private Set<String> topics = Set.of();
    /** The subscription's pattern as the member sent it; empty for none. */
    private String regex = "";
    /** {@link #regex} compiled; null for none, or for a stored one RE2/J does not take ({@link #restored}). */
    private Pattern pattern;
    private int epoch;
    private int previousEpoch = -1;
    private final Set<TopicPartition> owned = new HashSet<>();
    private final Set<TopicPartition> revoking = new HashSet<>();
    private long lastHeartbeatMs;
    private String host = "";
    /** The topics map {@link #subscribedTopics} last resolved against (by identity), and what it gave. */
    private Map<String, Integer> resolvedAgainst;
    private Set<String> resolved;

    GroupMember(String memberId, String instanceId, String clientId) {
        this.memberId = memberId;
        this.instanceId = instanceId;
        this.clientId = clientId;
    }

    /** A member as a coordinator stored it ({@link #state}), heard from at {@code nowMs}. */
    static GroupMember restored(GroupMemberState state, long nowMs) {
        GroupMember member = new GroupMember(state.getMemberId(), state.getInstanceId().isEmpty() ? null
                : state.getInstanceId(), state.getClientId());
        member.host = state.getHost();
        member.topics = Set.copyOf(state.getTopicsList());
        member.regex = state.getPattern();
        member.pattern = compiledOrNone(state.getPattern(), state.getMemberId());
        member.epoch = state.getEpoch();
        member.previousEpoch = state.getPreviousEpoch();
        member.owned.addAll(PartitionRefs.partitions(state.getOwnedList()));
        member.revoking.addAll(PartitionRefs.partitions(state.getRevokingList()));
        member.lastHeartbeatMs = nowMs;
        return member;
    }

    /** What a coordinator stores of the member: all but when it last heard from it. */
    GroupMemberState state() {
        return GroupMemberState.newBuilder().setMemberId(memberId).setInstanceId(instanceId == null ? "" : instanceId)
                .setClientId(clientId).setHost(host).addAllTopics(new TreeSet<>(topics))
                .setPattern(regex).setEpoch(epoch).setPreviousEpoch(previousEpoch)
                .addAllOwned(PartitionRefs.refs(owned)).addAllRevoking(PartitionRefs.refs(revoking)).build();
    }

    /** A member with {@code memberId} taking over what {@code previous} (same instance id) owned and its epoch. */
    static GroupMember replacing(GroupMember previous, String memberId, String clientId) {
        GroupMember member = new GroupMember(memberId, previous.instanceId, clientId);
        member.topics = previous.topics;
        member.regex = previous.regex;
        member.pattern = previous.pattern;
        member.epoch = previous.epoch;
        member.previousEpoch = previous.previousEpoch;
        member.owned.addAll(previous.owned);
        member.revoking.addAll(previous.revoking);
        return member;
    }

    /**
     * A stored pattern compiled; null for none, and for one RE2/J does not take (stored by a broker that compiled
     * patterns as Java regular expressions, with lookaround or backreferences): such a member matches no topic by
     * pattern until it subscribes again, and the group still loads.
     */
    private static Pattern compiledOrNone(String regex, String memberId) {
        if (regex.isEmpty()) {
            return null;
        }
        try {
            return Pattern.compile(regex);
        } catch (PatternSyntaxException e) {
            LOG.warn("Member {}'s stored subscription pattern '{}' is not an RE2/J regular expression ({}): it matches "
                    + "no topic until the member subscribes again", memberId, regex, e.getDescription());
            return null;
        }
    }

    String memberId() {
        return memberId;
    }

    Optional<String> instanceId() {
        return Optional.ofNullable(instanceId);
    }

    String clientId() {
        return clientId;
    }

    /**
     * Sets the subscription: the topics named and those the pattern matches in full (either may be absent).
     *
     * @return whether it changed
     */
    boolean subscribe(Set<String> newTopics, Pattern newPattern) {
        String newRegex = newPattern == null ? "" : newPattern.pattern();
        if (newTopics.equals(topics) && newRegex.equals(regex)) {
            return false;
        }
        topics = Set.copyOf(newTopics);
        regex = newRegex;
        pattern = newPattern;
        resolvedAgainst = null;
        return true;
    }

    Set<String> topics() {
        return topics;
    }

    /** The subscription's pattern as the member sent it, if any. */
    Optional<String> pattern() {
        return regex.isEmpty() ? Optional.empty() : Optional.of(regex);
    }

    /** Whether the subscription takes {@code topic}, by name or by pattern, whether it exists or not. */
    boolean subscribes(String topic) {
        return topics.contains(topic) || (pattern != null && pattern.matcher(topic).matches());
    }

    /**
     * The subscribed topics that exist, in name order: the names listed and those the pattern matches (only a pattern
     * walks every topic of the cluster). Kept until the subscription changes or another map is passed: a coordinator
     * passes the same map while the cluster's topics stay the same, so a heartbeat matches no pattern again.
     */
    Set<String> subscribedTopics(Map<String, Integer> existing) {
        if (existing != resolvedAgainst) {
            resolved = Collections.unmodifiableSet(resolve(existing));
            resolvedAgainst = existing;
        }
        return resolved;
    }

    private Set<String> resolve(Map<String, Integer> existing) {
        Set<String> resolved = new TreeSet<>();
        for (String topic : topics) {
            if (existing.containsKey(topic)) {
                resolved.add(topic);
            }
        }
        if (pattern != null) {
            for (String topic : existing.keySet()) {
                if (pattern.matcher(topic).matches()) {
                    resolved.add(topic);
                }
            }
        }
        return resolved;
    }

    int epoch() {
        return epoch;
    }

    int previousEpoch() {
        return previousEpoch;
    }

    /** @return whether the epoch changed */
    boolean moveToEpoch(int newEpoch) {
        if (newEpoch == epoch) {
            return false;
        }
        previousEpoch = epoch;
        epoch = newEpoch;
        return true;
    }

    /** Partitions given to the member and not released yet, those being revoked included. */
    Set<TopicPartition> owned() {
        return owned;
    }

    /** Owned partitions the member was asked to give up and has not yet said it did. */
    Set<TopicPartition> revoking() {
        return revoking;
    }

    /** What the member should own now: what it owns less what it is giving up. */
    Set<TopicPartition> assignment() {
        Set<TopicPartition> keep = new HashSet<>(owned);
        keep.removeAll(revoking);
        return keep;
    }

    /**
     * Takes the member's word on what it owns: partitions being revoked that it no longer lists are released.
     *
     * @return whether any was released
     */
    boolean reportOwned(Set<TopicPartition> reported) {
        return revoking.removeIf(tp -> {
            boolean released = !reported.contains(tp);
            if (released) {
                owned.remove(tp);
            }
            return released;
        });
    }

    long lastHeartbeatMs() {
        return lastHeartbeatMs;
    }

    /** Where the last heartbeat came from (host:port). */
    String host() {
        return host;
    }

    /** Sets when the member was last heard from, as another instance of it was. */
    void heardAt(long ms) {
        lastHeartbeatMs = ms;
    }

    /** @return whether the host changed */
    boolean heardFrom(long nowMs, String fromHost) {
        lastHeartbeatMs = nowMs;
        boolean moved = !fromHost.equals(host);
        host = fromHost;
        return moved;
    }
}
