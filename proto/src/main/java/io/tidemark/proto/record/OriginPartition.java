package io.tidemark.proto.record;

import java.util.Objects;
import java.util.UUID;

/**
 * A partition of another cluster that mirrored records were copied from: the cluster's name (as mirrors are told
 * it), the topic there with its id, and the partition. The id makes a topic deleted and created again under the same
 * name another origin, whose offsets start again: its records are never taken for copies of the old topic's.
 *
 * @param cluster   1 to 64 of a-z A-Z 0-9 . _ - (ASCII: a name takes one byte a character in provenance, which
 *                  checks it byte by byte)
 * @param topic     not empty
 * @param topicId   the topic's id on that cluster ({@link TopicIds})
 * @param partition not negative
 */
public record OriginPartition(String cluster, String topic, UUID topicId, int partition) {
    /** What a cluster name may be, as error messages say it. */
    public static final String CLUSTER_NAME_RULE = "1 to 64 characters from a-z A-Z 0-9 . _ -";
    /** The longest cluster name, in characters and, since they are ASCII, in UTF-8 bytes. */
    public static final int CLUSTER_NAME_LENGTH_MAX = 64;

    public OriginPartition {
        checkClusterName(cluster);
        Objects.requireNonNull(topic, "topic");
        if (topic.isEmpty()) {
            throw new IllegalArgumentException("origin topic is empty");
        }
        Objects.requireNonNull(topicId, "topicId");
        if (partition < 0) {
            throw new IllegalArgumentException("origin partition " + partition + " is negative");
        }
    }

    /** Whether {@code name} is a cluster name: {@value #CLUSTER_NAME_RULE}. */
    public static boolean isClusterName(String name) {
        if (name == null || name.isEmpty() || name.length() > CLUSTER_NAME_LENGTH_MAX) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            if (!isClusterNameCharacter(name.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether {@code c} may appear in a cluster name. Every such character is ASCII, one byte in UTF-8, so a name's
     * bytes can be checked one by one; a negative byte (part of a longer UTF-8 sequence) is refused.
     */
    static boolean isClusterNameCharacter(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_'
                || c == '-';
    }

    /** @throws IllegalArgumentException saying which names are allowed */
    public static void checkClusterName(String name) {
        if (!isClusterName(name)) {
            throw new IllegalArgumentException(clusterNameRefusal(name));
        }
    }

    /** Why {@code name}, which is not a cluster name, is refused. */
    static String clusterNameRefusal(String name) {
        return "cluster name '" + name + "' is not allowed: use " + CLUSTER_NAME_RULE;
    }

    /** {@code cluster:topic-partition (topic id ID)}, as messages name it. */
    @Override
    public String toString() {
        return cluster + ":" + topic + "-" + partition + " (topic id " + topicId + ")";
    }
}
