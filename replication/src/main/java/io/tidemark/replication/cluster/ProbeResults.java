package io.tidemark.replication.cluster;

import io.tidemark.core.partition.PartitionLeader;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the probes of the other brokers last heard ({@link ClusterLiveness}): when each broker last answered, which
 * partition groups it said it leads, in which Raft term, and how long before its answer its own probes had last
 * heard from each other broker. A broker is up while its last answer is at most {@code silenceMsMax} old. Only up
 * brokers' claims count, and of two claims on one group the higher term wins: the other is a leader that has not
 * heard yet that it was replaced. No time is read here: callers pass it.
 *
 * <p>Thread-safe: each broker's answer is replaced whole in a concurrent map.
 */
final class ProbeResults {
    private record Answer(long atMs, Map<UUID, Long> leaderTerms, Map<Integer, Long> peerAnsweredMsAgo) {
    }

    private final long silenceMsMax;
    private final Map<Integer, Answer> answers = new ConcurrentHashMap<>();

    ProbeResults(long silenceMsMax) {
        this.silenceMsMax = silenceMsMax;
    }

    /**
     * Records that the broker answered at {@code atMs}, leading the given groups in the given terms, its own probes
     * having last heard from each of the given brokers the given number of milliseconds before it answered.
     */
    void answered(int nodeId, long atMs, Map<UUID, Long> leaderTerms, Map<Integer, Long> peerAnsweredMsAgo) {
        answers.put(nodeId, new Answer(atMs, Map.copyOf(leaderTerms), Map.copyOf(peerAnsweredMsAgo)));
    }

    /** How long before {@code nowMs} the broker last answered; {@link Long#MAX_VALUE} if it never did. */
    long answeredMsAgo(int nodeId, long nowMs) {
        Answer answer = answers.get(nodeId);
        return answer == null ? Long.MAX_VALUE : nowMs - answer.atMs();
    }

    /**
     * How long before {@code nowMs} {@code observer}'s own probes last heard from {@code nodeId}, as far as its last
     * answer tells (its age added); {@link Long#MAX_VALUE} if unknown.
     */
    long answeredMsAgo(int observer, int nodeId, long nowMs) {
        Answer answer = answers.get(observer);
        Long ago = answer == null ? null : answer.peerAnsweredMsAgo().get(nodeId);
        return ago == null ? Long.MAX_VALUE : nowMs - answer.atMs() + ago;
    }

    boolean up(int nodeId, long nowMs) {
        return answeredMsAgo(nodeId, nowMs) <= silenceMsMax;
    }

    /**
     * The up broker claiming the group in the highest term (the lowest node id on a tie), with that term; or
     * {@link PartitionLeader#NONE}.
     */
    PartitionLeader leaderOf(UUID groupId, long nowMs) {
        PartitionLeader leader = PartitionLeader.NONE;
        for (Map.Entry<Integer, Answer> entry : answers.entrySet()) {
            Long term = entry.getValue().leaderTerms().get(groupId);
            if (term == null || !up(entry.getKey(), nowMs)) {
                continue;
            }
            if (leader == PartitionLeader.NONE || term > leader.epoch()
                    || (term == leader.epoch() && entry.getKey() < leader.nodeId())) {
                leader = new PartitionLeader(entry.getKey(), term);
            }
        }
        return leader;
    }
}
