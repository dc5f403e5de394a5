package io.tidemark.replication.raft;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which followers of the Raft groups this replica leads answer but never catch up. Ratis 3.2 can come to believe that
 * a follower matched an index it does not hold (its follower-side append answers SUCCESS for entries whose index it
 * is already appending, whatever their term: {@code NavigableIndices} in {@code ServerImplUtils}); from then on the
 * leader never offers it an entry below that belief ({@code LogAppenderBase.getNextIndexForInconsistency} keeps
 * nextIndex above matchIndex), the follower answers INCONSISTENCY a thousand times a second, and it stays behind for
 * as long as that leader leads (CI run of 9b34327: a broker's metadata replica froze at its first entry for the whole
 * test). A new leader starts with no belief about any follower, so the remedy is to step down.
 *
 * <p>A follower is behind when the leader's log holds entries past its match index and still holds the one after it
 * (one it lacks below the leader's log start is a snapshot install, which takes the time it takes). A follower that
 * answered within {@code answeredMsMax} and stayed behind at one match index, under one term, for {@code stuckMs} is
 * stuck: a follower that catches up moves its match index every round trip, and one that does not answer is down or
 * cut off, which an election, not a step-down, is for.
 *
 * <p>Not thread-safe: one caller, the watch's thread. No time is read here: callers pass it.
 */
final class StuckFollowers {
    /** A follower as its leader sees it. */
    record Follower(String groupId, int nodeId, long matchIndex, long answeredMsAgo) {
    }

    /** What the leader of a group knows of its own log: the first index it holds, and the last. */
    record LeaderLog(String groupId, long term, long startIndex, long lastIndex) {
    }

    private record Key(String groupId, int nodeId) {
    }

    private record Behind(long term, long matchIndex, long sinceMs) {
    }

    private final long stuckMs;
    private final long answeredMsMax;
    private final Map<Key, Behind> behind = new HashMap<>();

    StuckFollowers(long stuckMs, long answeredMsMax) {
        this.stuckMs = stuckMs;
        this.answeredMsMax = answeredMsMax;
    }

    /**
     * Notes what the leaders here see now ({@code followers} of the groups of {@code leaders}, every group this
     * replica leads) and returns the followers stuck at {@code nowMs}. Followers of groups not passed are forgotten.
     */
    List<Follower> observe(List<LeaderLog> leaders, List<Follower> followers, long nowMs) {
        Map<String, LeaderLog> logs = new HashMap<>();
        leaders.forEach(log -> logs.put(log.groupId(), log));
        Map<Key, Behind> seen = new HashMap<>();
        List<Follower> stuck = new ArrayList<>();
        for (Follower follower : followers) {
            LeaderLog log = logs.get(follower.groupId());
            if (log == null || !behindWithEntriesToSend(follower, log)) {
                continue;
            }
            Key key = new Key(follower.groupId(), follower.nodeId());
            Behind before = behind.get(key);
            Behind now = before != null && before.term() == log.term() && before.matchIndex() == follower.matchIndex()
                    ? before : new Behind(log.term(), follower.matchIndex(), nowMs);
            seen.put(key, now);
            if (nowMs - now.sinceMs() >= stuckMs) {
                stuck.add(follower);
            }
        }
        behind.clear();
        behind.putAll(seen);
        return stuck;
    }

    /** Forgets what was seen of a group's followers: its leader stepped down, so its view of them is gone. */
    void forget(String groupId) {
        behind.keySet().removeIf(key -> key.groupId().equals(groupId));
    }

    private boolean behindWithEntriesToSend(Follower follower, LeaderLog log) {
        return follower.answeredMsAgo() <= answeredMsMax && follower.matchIndex() < log.lastIndex()
                && follower.matchIndex() + 1 >= log.startIndex();
    }
}
