package io.tidemark.replication.cluster;

import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.error.TidemarkException;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the probes of the other brokers last heard ({@link ClusterLiveness}): when each broker last answered and
 * which partitions it said it leads, in which Raft term. A broker is up while its last answer is at most
 * {@code silenceMsMax} old. Only up brokers' claims count, and of two claims on one partition the higher term
 * wins: the other is a leader that has not heard yet that it was replaced. No time is read here: callers pass it.
 *
 * <p>Thread-safe: each broker's answer is replaced whole in a concurrent map.
 */
final class ProbeResults {
    private record Answer(long atMs, Map<TopicPartition, Long> leaderTerms) {
    }

    private final long silenceMsMax;
    private final Map<Integer, Answer> answers = new ConcurrentHashMap<>();

    ProbeResults(long silenceMsMax) {
        this.silenceMsMax = silenceMsMax;
    }

    /** Records that the broker answered at {@code atMs}, leading the given partitions in the given terms. */
    void answered(int nodeId, long atMs, Map<TopicPartition, Long> leaderTerms) {
        answers.put(nodeId, new Answer(atMs, Map.copyOf(leaderTerms)));
    }

    boolean up(int nodeId, long nowMs) {
        Answer answer = answers.get(nodeId);
        return answer != null && nowMs - answer.atMs() <= silenceMsMax;
    }

    /** The up broker claiming the partition in the highest term (the lowest node id on a tie), or NO_LEADER. */
    int leaderOf(TopicPartition partition, long nowMs) {
        int leader = TidemarkException.NO_LEADER;
        long leaderTerm = Long.MIN_VALUE;
        for (Map.Entry<Integer, Answer> entry : answers.entrySet()) {
            Long term = entry.getValue().leaderTerms().get(partition);
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
