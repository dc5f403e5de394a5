package io.tidemark.replication.cluster;

import io.tidemark.proto.error.TidemarkException;

import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the probes of the other brokers last heard ({@link ClusterLiveness}): when each broker last answered and
 * which partition groups it said it leads, in which Raft term. A broker is up while its last answer is at most
 * {@code silenceMsMax} old. Only up brokers' claims count, and of two claims on one group the higher term
 * wins: the other is a leader that has not heard yet that it was replaced. No time is read here: callers pass it.
 *
 * <p>Thread-safe: each broker's answer is replaced whole in a concurrent map.
 */
final class ProbeResults {
    private record Answer(long atMs, Map<UUID, Long> leaderTerms, Set<Integer> upNodeIds) {
    }

    private final long silenceMsMax;
    private final Map<Integer, Answer> answers = new ConcurrentHashMap<>();

    ProbeResults(long silenceMsMax) {
        this.silenceMsMax = silenceMsMax;
    }

    /**
     * Records that the broker answered at {@code atMs}, leading the given groups in the given terms and finding the
     * given brokers up.
     */
    void answered(int nodeId, long atMs, Map<UUID, Long> leaderTerms, Set<Integer> upNodeIds) {
        answers.put(nodeId, new Answer(atMs, Map.copyOf(leaderTerms), Set.copyOf(upNodeIds)));
    }

    /** Whether {@code observer} is up and its last answer said it finds {@code nodeId} up. */
    boolean seesUp(int observer, int nodeId, long nowMs) {
        Answer answer = answers.get(observer);
        return up(observer, nowMs) && answer.upNodeIds().contains(nodeId);
    }

    boolean up(int nodeId, long nowMs) {
        Answer answer = answers.get(nodeId);
        return answer != null && nowMs - answer.atMs() <= silenceMsMax;
    }

    /** The up broker claiming the group in the highest term (the lowest node id on a tie), or NO_LEADER. */
    int leaderOf(UUID groupId, long nowMs) {
        int leader = TidemarkException.NO_LEADER;
        long leaderTerm = Long.MIN_VALUE;
        for (Map.Entry<Integer, Answer> entry : answers.entrySet()) {
            Long term = entry.getValue().leaderTerms().get(groupId);
            if (term == null || !up(entry.getKey(), nowMs)) {
                continue;
            }
            if (term > leaderTerm || (term == leaderTerm && entry.getKey() < leader)) {
                leader = entry.getKey();
                leaderTerm = term;
            }
        }
        return leader;
    }
}
