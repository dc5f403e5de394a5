package io.tidemark.client.api;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ConsumerGroupHeartbeatRequest;
import io.tidemark.proto.v1.ConsumerGroupHeartbeatResponse;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.OwnedPartitions;
import io.tidemark.proto.v1.Subscription;
import io.tidemark.proto.v1.TopicPartitionRef;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;

/**
 * A subscribed consumer's membership of its group: the member side of the consumer-group protocol (KIP-848). It
 * heartbeats to the coordinator (the leader of {@code __group_offsets}) when the coordinator's interval is up, at once
 * after joining or giving partitions up, and applies each answer: the partitions it owns but the answer does not list
 * are revoked (the consumer stops them, its listener commits), those the answer adds are assigned. Every heartbeat
 * lists what the consumer owns, which is how the coordinator learns that revoked partitions were released.
 *
 * <p>A heartbeat refused with UNKNOWN_MEMBER_ID or STALE_MEMBER_EPOCH means the group fenced this member (its session
 * expired, the coordinator moved and forgot it): its partitions are lost (others may read them already) and it joins
 * again. A retriable failure waits {@code retry.backoff.ms}; the session timeout on the coordinator bounds how long.
 *
 * <p>Not thread-safe: the consumer's thread.
 */
final class GroupMembership {
    /** What the consumer does when its partitions change. */
    interface Changes {
        void revoked(Set<TopicPartition> partitions);

        void assigned(Set<TopicPartition> partitions);

        void lost(Set<TopicPartition> partitions);
    }

    private static final Logger LOG = LoggerFactory.getLogger(GroupMembership.class);

    private final String group;
    private final ConsumerConfig config;
    private final LeaderCaller leaders;
    private Subscription subscription;
    private String memberId = "";
    private int memberEpoch;
    private boolean subscriptionSent;
    private Set<TopicPartition> owned = Set.of();
    private long nextHeartbeatAtMs;

    /** @param pattern null, or a pattern whose fully matching topics are subscribed too */
    GroupMembership(String group, ConsumerConfig config, LeaderCaller leaders, Set<String> topics, Pattern pattern) {
        this.group = group;
        this.config = config;
        this.leaders = leaders;
        this.subscription = subscription(topics, pattern);
    }

    private static Subscription subscription(Set<String> topics, Pattern pattern) {
        return Subscription.newBuilder().addAllTopics(new TreeSet<>(topics))
                .setPattern(pattern == null ? "" : pattern.pattern()).build();
    }

    /**
     * Changes the subscription in place, as this member: the next heartbeat, due at once, carries it, and the group
     * moves partitions as for any change (those of topics no longer subscribed are revoked the usual way).
     */
    void resubscribe(Set<String> topics, Pattern pattern) {
        Subscription changed = subscription(topics, pattern);
        if (!changed.equals(subscription)) {
            subscription = changed;
            subscriptionSent = false;
            nextHeartbeatAtMs = 0;
        }
    }

    /** The partitions the group gave this consumer and it has not given up. */
    Set<TopicPartition> owned() {
        return owned;
    }

    /** When the next heartbeat is due (clock millis). */
    long nextHeartbeatAtMs() {
        return nextHeartbeatAtMs;
    }

    /**
     * Heartbeats when one is due and applies the answer through {@code changes}.
     *
     * @throws TidemarkException a failure that is neither retriable nor a fencing (INVALID_REQUEST, ...)
     */
    void heartbeatIfDue(long nowMs, Changes changes) {
        if (nowMs < nextHeartbeatAtMs) {
            return;
        }
        ConsumerGroupHeartbeatRequest.Builder request = ConsumerGroupHeartbeatRequest.newBuilder().setGroup(group)
                .setMemberId(memberId).setMemberEpoch(memberEpoch).setClientId(config.clientId())
                .setInstanceId(config.groupInstanceId().orElse("")).setOwned(owned(owned));
        if (!subscriptionSent) {
            request.setSubscription(subscription);
        }
        ConsumerGroupHeartbeatResponse answer;
        try {
            answer = GrpcFutures.await(leaders.coordinator(stub -> stub.consumerGroupHeartbeat(request.build())));
        } catch (TidemarkException e) {
            if (e.code() == ErrorCode.UNKNOWN_MEMBER_ID || e.code() == ErrorCode.STALE_MEMBER_EPOCH) {
                LOG.warn("Group {} fenced member {} ({}); it gives up {} and joins again", group, memberId,
                        e.getMessage(), owned);
                Set<TopicPartition> lost = owned;
                owned = Set.of();
                memberId = "";
                memberEpoch = 0;
                subscriptionSent = false;
                nextHeartbeatAtMs = nowMs;
                changes.lost(lost);
                return;
            }
            if (!e.retriable()) {
                throw e;
            }
            nextHeartbeatAtMs = nowMs + config.retryBackoffMs();
            return;
        }
        memberId = answer.getMemberId();
        memberEpoch = answer.getMemberEpoch();
        subscriptionSent = true;
        nextHeartbeatAtMs = nowMs + answer.getHeartbeatIntervalMs();
        Set<TopicPartition> target = new LinkedHashSet<>();
        answer.getAssignmentList().forEach(ref -> target.add(new TopicPartition(ref.getTopic(), ref.getPartition())));
        Set<TopicPartition> revoked = new LinkedHashSet<>(owned);
        revoked.removeAll(target);
        Set<TopicPartition> added = new LinkedHashSet<>(target);
        added.removeAll(owned);
        if (!revoked.isEmpty()) {
            changes.revoked(revoked);
            Set<TopicPartition> kept = new HashSet<>(owned);
            kept.removeAll(revoked);
            owned = Set.copyOf(kept);
            nextHeartbeatAtMs = nowMs;
        }
        if (!added.isEmpty()) {
            Set<TopicPartition> all = new HashSet<>(owned);
            all.addAll(added);
            owned = Set.copyOf(all);
            changes.assigned(added);
        }
    }

    /**
     * Commits as this member: to the coordinator, with its id and epoch, so a commit of partitions it no longer owns
     * is refused. Before the first answer (no member id yet) there is nothing of the group's to commit.
     */
    /** The member as it is now: for offsets sent to a transaction. */
    ConsumerGroupMetadata metadata() {
        return new ConsumerGroupMetadata(group, memberId, memberEpoch);
    }

    CompletableFuture<Void> commit(Map<TopicPartition, OffsetAndMetadata> offsets) {
        var request = GroupOffsets.request(group, offsets).setMemberId(memberId).setMemberEpoch(memberEpoch).build();
        return leaders.coordinator(stub -> stub.commitOffsets(request)).thenApply(response -> null);
    }

    /**
     * Leaves the group (a static member leaves for its session only, so it gets its partitions back when it returns
     * in time); best effort: a failure is logged, and the coordinator expires the member after its session anyway.
     */
    void leave() {
        if (memberId.isEmpty()) {
            return;
        }
        int epoch = config.groupInstanceId().isPresent() ? -2 : -1;
        ConsumerGroupHeartbeatRequest request = ConsumerGroupHeartbeatRequest.newBuilder().setGroup(group)
                .setMemberId(memberId).setMemberEpoch(epoch).setClientId(config.clientId())
                .setInstanceId(config.groupInstanceId().orElse("")).build();
        try {
            GrpcFutures.await(leaders.coordinator(stub -> stub.consumerGroupHeartbeat(request)));
        } catch (TidemarkException e) {
            LOG.warn("Member {} could not leave group {} ({}); the coordinator expires it after its session",
                    memberId, group, e.getMessage());
        }
        memberId = "";
        owned = Set.of();
    }

    private static OwnedPartitions owned(Set<TopicPartition> partitions) {
        OwnedPartitions.Builder owned = OwnedPartitions.newBuilder();
        partitions.forEach(tp -> owned.addPartitions(TopicPartitionRef.newBuilder().setTopic(tp.topic())
                .setPartition(tp.partition())));
        return owned.build();
    }
}
