package io.tidemark.replication.cluster;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Whether the other brokers have this broker's {@code cluster.name}, as their probe answers say ({@link
 * ClusterLiveness}). Every broker of a cluster needs the same name, since clients and mirrors are told the name of
 * the broker they ask; a broker with another one is still a member (a rolling change of the name passes through
 * such a state), so a difference is only reported: once when it shows and again when the member's name changes, not
 * at every probe. Names are compared as the probes carry them, "" for none.
 *
 * <p>Thread-safe: probe answers arrive on gRPC's threads.
 */
final class ClusterNameAgreement {
    private final String own;
    private final Map<Integer, String> differing = new ConcurrentHashMap<>();

    /** @param own this broker's cluster.name, "" for none */
    ClusterNameAgreement(String own) {
        this.own = own;
    }

    /**
     * Records the name a member answered with.
     *
     * @return the warning to log when it differs from this broker's and the member did not answer it the last time
     */
    Optional<String> answered(int member, String name) {
        if (name.equals(own)) {
            differing.remove(member);
            return Optional.empty();
        }
        if (name.equals(differing.put(member, name))) {
            return Optional.empty();
        }
        return Optional.of("node " + member + " has " + described(name) + " and this broker has " + described(own)
                + ": every broker of a cluster needs the same cluster.name (clients and mirrors are told the name of "
                + "the broker they ask)");
    }

    private static String described(String name) {
        return name.isEmpty() ? "no cluster.name" : "cluster.name '" + name + "'";
    }
}
