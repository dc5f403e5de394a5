package io.tidemark.replication.cluster;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.replication.raft.RaftPeerIds;
import org.apache.ratis.protocol.RaftPeer;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.IntStream;

/**
 * The brokers of a cluster, fixed by configuration: for each node id, the host, the port clients use and the port
 * Raft uses. Written {@code ID=HOST:CLIENT_PORT:RAFT_PORT} and comma-separated, e.g.
 * {@code 1=127.0.0.1:9400:9500,2=127.0.0.1:9410:9510,3=127.0.0.1:9420:9520}.
 */
public record ClusterMembers(Map<Integer, Member> members) {
    /** One broker. */
    public record Member(int nodeId, String host, int clientPort, int raftPort) {
        public String clientAddress() {
            return host + ":" + clientPort;
        }

        /** The Raft peer: Ratis servers and Ratis clients both use the Raft port (never the broker's client port). */
        public RaftPeer peer() {
            return RaftPeer.newBuilder().setId(RaftPeerIds.of(nodeId)).setAddress(host + ":" + raftPort).build();
        }
    }

    public ClusterMembers {
        members = Map.copyOf(new TreeMap<>(members));
    }

    /** A cluster of one. */
    public static ClusterMembers of(int nodeId, String host, int clientPort, int raftPort) {
        return new ClusterMembers(Map.of(nodeId, new Member(nodeId, host, clientPort, raftPort)));
    }

    public static ClusterMembers parse(String text) {
        Map<Integer, Member> members = new TreeMap<>();
        for (String part : text.split(",")) {
            String[] idAndAddress = part.trim().split("=");
            String[] address = idAndAddress.length == 2 ? idAndAddress[1].split(":") : new String[0];
            try {
                if (address.length != 3) {
                    throw new NumberFormatException();
                }
                int id = Integer.parseInt(idAndAddress[0]);
                members.put(id, new Member(id, address[0], Integer.parseInt(address[1]), Integer.parseInt(address[2])));
            } catch (NumberFormatException e) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIG, "invalid cluster member '" + part + "'; allowed: "
                        + "ID=HOST:CLIENT_PORT:RAFT_PORT, comma-separated, e.g. 1=127.0.0.1:9400:9500");
            }
        }
        return new ClusterMembers(members);
    }

    public Member member(int nodeId) {
        Member member = members.get(nodeId);
        if (member == null) {
            throw new IllegalStateException("node " + nodeId + " is not a member of " + members.keySet());
        }
        return member;
    }

    public Optional<Member> find(int nodeId) {
        return Optional.ofNullable(members.get(nodeId));
    }

    public Collection<Member> all() {
        return members.values();
    }

    public List<Integer> nodeIds() {
        return List.copyOf(members.keySet());
    }

    /**
     * The peers of the given nodes, all of the same Raft priority. Ratis makes the others wait for a peer of higher
     * priority before they elect a leader among themselves, which measured 5-8 s of unavailability when the leader
     * died while the preferred peer was restarting; with equal priorities failover takes one election.
     */
    public List<RaftPeer> peers(List<Integer> nodeIds) {
        return nodeIds.stream().map(id -> member(id).peer()).toList();
    }

    /**
     * The peers of a partition group that Ratis starts without a stored configuration (a new group), the preferred
     * replica (the first of {@code replicas}) of a higher priority than the others: a candidate of Ratis needs the
     * vote of every peer of higher priority that answers, so the preferred replica wins the group's first election
     * while it is up, and the leader balancer need not move the group there later, when producers may already write
     * to it (a fresh cluster's groups were moved that way in a benchmark's first seconds, and a move whose first
     * transfer failed cost another election). The leader's balancer sets the priorities equal at its next pass
     * ({@link #peers} says why they are kept equal); Ratis replaces this configuration by the group's stored one
     * when the group restarts.
     */
    public List<RaftPeer> peersPreferringFirst(List<Integer> replicas) {
        return IntStream.range(0, replicas.size()).mapToObj(i -> RaftPeer.newBuilder(member(replicas.get(i)).peer())
                .setPriority(i == 0 ? 1 : 0).build()).toList();
    }
}
