package io.tidemark.mirror;

import io.tidemark.proto.record.OriginPartition;

import java.util.Optional;

/**
 * The names of the two clusters a mirror copies between, tied to the clusters' own names: a cluster may have one
 * (its brokers' {@code cluster.name}, answered in ClusterStatus), and then the mirror's name for it must be that one.
 * <ul>
 *   <li>The target's name is its own; {@code --target-name} is needed only for a target without one, and must be the
 *       target's own name when both are there ({@link #resolve}).</li>
 *   <li>{@code --source-name} must be the source's own name when the source has one ({@link #checkSource}).</li>
 *   <li>The two differ: the loop rule tells clusters apart by name.</li>
 * </ul>
 * A mismatch means the mirror points at another cluster than the operator meant, and would write provenance,
 * checkpoints and heartbeats under a wrong name: it is refused, naming both names. Pure: the clusters' answers are
 * passed in.
 *
 * @param source the source's name: written into every copy's provenance and the mirror's state on the target
 * @param target the target's name: a record whose path holds it is never copied there
 */
public record ClusterNames(String source, String target) {
    public ClusterNames {
        checkDifferent(source, target);
    }

    /** @throws IllegalArgumentException when a name is not a cluster name, or both are the same */
    static void checkDifferent(String source, String target) {
        OriginPartition.checkClusterName(source);
        OriginPartition.checkClusterName(target);
        if (source.equals(target)) {
            throw new IllegalArgumentException("the source and target names are both '" + source
                    + "'; a mirror copies between two clusters with different names");
        }
    }

    /**
     * The names from the mirror's config and the target's own name.
     *
     * @param targetOwn the target's cluster.name; empty when it has none
     * @throws IllegalArgumentException when the target has no name and none is given, the one given is not the
     *                                  target's, or the source's is the same
     */
    public static ClusterNames resolve(MirrorConfig config, Optional<String> targetOwn) {
        Optional<String> given = config.targetName();
        if (targetOwn.isEmpty()) {
            return new ClusterNames(config.sourceName(), given.orElseThrow(() -> new IllegalArgumentException(
                    "the target cluster " + config.targetBootstrap() + " has no name: set cluster.name in its "
                            + "brokers' config, or give --target-name")));
        }
        if (given.isPresent() && !given.get().equals(targetOwn.get())) {
            throw mismatch("target", config.targetBootstrap(), targetOwn.get(), given.get(),
                    "check --target, or leave --target-name out to take the target's own name");
        }
        return new ClusterNames(config.sourceName(), targetOwn.get());
    }

    /**
     * Checks the source's own name against {@link #source}.
     *
     * @param sourceOwn the source's cluster.name; empty when it has none, and then nothing is checked
     * @throws IllegalArgumentException when the source has another name
     */
    public void checkSource(String sourceBootstrap, Optional<String> sourceOwn) {
        if (sourceOwn.isPresent() && !sourceOwn.get().equals(source)) {
            throw mismatch("source", sourceBootstrap, sourceOwn.get(), source, "check --source and --source-name");
        }
    }

    private static IllegalArgumentException mismatch(String role, String bootstrap, String own, String given,
                                                     String advice) {
        return new IllegalArgumentException("the " + role + " cluster " + bootstrap + " is named '" + own
                + "' (its cluster.name), not '" + given + "' as --" + role + "-name says: " + advice);
    }
}
