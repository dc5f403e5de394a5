package io.tidemark.proto.record;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A partition of another cluster that mirrored records were copied from: the cluster's name (as mirrors are told
 * it), the topic there and the partition.
 *
 * @param cluster   1 to 64 of a-z A-Z 0-9 . _ - (so a path of names joins with ',' unambiguously)
 * @param topic     not empty
 * @param partition not negative
 */
public record OriginPartition(String cluster, String topic, int partition) {
    /** What a cluster name may be, as error messages say it. */
    public static final String CLUSTER_NAME_RULE = "1 to 64 characters from a-z A-Z 0-9 . _ -";
    private static final Pattern CLUSTER_NAME = Pattern.compile("[a-zA-Z0-9._-]{1,64}");

    public OriginPartition {
        checkClusterName(cluster);
        Objects.requireNonNull(topic, "topic");
        if (topic.isEmpty()) {
            throw new IllegalArgumentException("origin topic is empty");
        }
        if (partition < 0) {
            throw new IllegalArgumentException("origin partition " + partition + " is negative");
        }
    }

    /** Whether {@code name} is a cluster name: {@value #CLUSTER_NAME_RULE}. */
    public static boolean isClusterName(String name) {
        return name != null && CLUSTER_NAME.matcher(name).matches();
    }

    /** @throws IllegalArgumentException saying which names are allowed */
    public static void checkClusterName(String name) {
        if (!isClusterName(name)) {
            throw new IllegalArgumentException("cluster name '" + name + "' is not allowed: use " + CLUSTER_NAME_RULE);
        }
    }

    @Override
    public String toString() {
        return cluster + ":" + topic + "-" + partition;
    }
}
