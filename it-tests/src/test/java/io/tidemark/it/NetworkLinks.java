package io.tidemark.it;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;

import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The network between the brokers of a cluster on 127.0.0.1, made of {@link LinkProxy}s: for every ordered pair of
 * brokers (A, B), the link A uses to reach B is two proxies, one to B's client port (probes, catch-up copies) and
 * one to B's Raft port. Broker A is started with its own member list ({@link #membersSeenBy}), in which its own
 * entry has its real ports and every other member's entry the ports of A's outgoing proxies, so everything A
 * initiates towards B goes through link A->B, and replies come back on the same connections.
 *
 * <p>Why the brokers accept differing lists: a broker takes its own entry for the ports it listens on and the other
 * entries for where it connects; members are matched by node id only (Raft peer ids are the node ids). Ratis keeps
 * the first address it learns for a peer id in each process (its {@code PeerProxyMap.computeIfAbsent}), and a broker
 * creates every group with its own list before any other broker's configuration entry reaches it, so a leader's
 * configuration entries, which carry that leader's addresses, do not redirect the followers' connections. That last
 * point holds for brokers started once: a broker restarted on its data would recover its groups from the
 * configuration in its Raft log, which may be another leader's list, so this harness does not restart brokers.
 *
 * <p>The addresses brokers give clients (Metadata, NOT_LEADER hints, status) come from the same lists, so a client
 * would be sent through a broker's outgoing proxy; {@link #directChannels()} maps those addresses back to the
 * brokers' own, so the test's clients always connect straight to the brokers and only broker-to-broker traffic is
 * partitioned.
 *
 * <p>Threading: the control methods are thread-safe; they return once the change is in effect on the links.
 */
final class NetworkLinks implements Closeable {
    /** A broker's own ports on 127.0.0.1. */
    record Ports(int clientPort, int raftPort) {
    }

    /** The proxies of the directed link from one broker to another. */
    private record Link(int from, int to, LinkProxy client, LinkProxy raft) {
        List<LinkProxy> proxies() {
            return List.of(client, raft);
        }
    }

    private static final String HOST = "127.0.0.1";

    private final ProxyLoop loop;
    private final Map<Integer, Ports> brokers;
    /** Keyed "from->to". */
    private final Map<String, Link> links = new TreeMap<>();
    /** A proxy's client address to the broker's own client address. */
    private final Map<String, String> direct = new TreeMap<>();

    private NetworkLinks(ProxyLoop loop, Map<Integer, Ports> brokers) {
        this.loop = loop;
        this.brokers = Map.copyOf(brokers);
    }

    /** Opens the links between every two of {@code brokers} (node id to its own ports), all healed. */
    static NetworkLinks open(Map<Integer, Ports> brokers) throws IOException {
        NetworkLinks network = new NetworkLinks(ProxyLoop.start("network-links"), brokers);
        try {
            for (int from : new TreeMap<>(brokers).keySet()) {
                for (int to : new TreeMap<>(brokers).keySet()) {
                    if (from != to) {
                        network.add(from, to);
                    }
                }
            }
            return network;
        } catch (RuntimeException e) {
            network.close();
            throw e;
        }
    }

    private void add(int from, int to) {
        Ports target = brokers.get(to);
        Link link = new Link(from, to, loop.open(from + "->" + to + " client", target.clientPort()),
                loop.open(from + "->" + to + " raft", target.raftPort()));
        links.put(key(from, to), link);
        direct.put(HOST + ":" + link.client().port(), HOST + ":" + target.clientPort());
    }

    private static String key(int from, int to) {
        return from + "->" + to;
    }

    private Link link(int from, int to) {
        Link link = links.get(key(from, to));
        if (link == null) {
            throw new IllegalArgumentException("no link " + key(from, to) + "; links: " + links.keySet());
        }
        return link;
    }

    /** The {@code --cluster} list of broker {@code node}: its own real ports, the others' through its links. */
    String membersSeenBy(int node) {
        List<String> members = new ArrayList<>();
        for (Map.Entry<Integer, Ports> broker : new TreeMap<>(brokers).entrySet()) {
            int other = broker.getKey();
            Ports ports = other == node ? broker.getValue()
                    : new Ports(link(node, other).client().port(), link(node, other).raft().port());
            members.add(other + "=" + HOST + ":" + ports.clientPort() + ":" + ports.raftPort());
        }
        return String.join(",", members);
    }

    /** The broker's own address for an address a broker advertised (one of its proxies'), else the address itself. */
    String direct(String address) {
        return direct.getOrDefault(address, address);
    }

    /** A client channel factory that connects straight to the brokers, whatever address a broker named. */
    Function<String, ManagedChannel> directChannels() {
        return address -> NettyChannelBuilder.forTarget(direct(address)).usePlaintext()
                .maxInboundMessageSize(64 << 20).build();
    }

    /** One-way: {@code from} can no longer reach {@code to} (its connections stall); {@code to} still reaches it. */
    void cut(int from, int to) {
        link(from, to).proxies().forEach(LinkProxy::cut);
    }

    /** Both ways between {@code a} and {@code b}. */
    void cutBothWays(int a, int b) {
        cut(a, b);
        cut(b, a);
    }

    /** {@code node} reaches no broker and no broker reaches it. */
    void isolate(int node) {
        for (int other : brokers.keySet()) {
            if (other != node) {
                cutBothWays(node, other);
            }
        }
    }

    /** Every link flows again. */
    void healAll() {
        links.values().forEach(link -> link.proxies().forEach(LinkProxy::heal));
    }

    /** Bytes broker {@code from} delivered to {@code to} and got back through link from->to, both ports. */
    long bytesThrough(int from, int to) {
        return link(from, to).proxies().stream().mapToLong(p -> p.bytesForwarded(LinkProxy.Direction.TO_TARGET)
                + p.bytesForwarded(LinkProxy.Direction.FROM_TARGET)).sum();
    }

    /** Bytes through each proxy, "1->2 raft" to its count, for checks and messages. */
    Map<String, Long> bytesPerProxy() {
        return links.values().stream().flatMap(link -> link.proxies().stream()).collect(Collectors.toMap(
                LinkProxy::name, p -> p.bytesForwarded(LinkProxy.Direction.TO_TARGET)
                        + p.bytesForwarded(LinkProxy.Direction.FROM_TARGET), Long::sum, TreeMap::new));
    }

    /** The links cut now, e.g. "[1->2, 2->1]", for logs. */
    String describeCuts() {
        return links.values().stream().filter(link -> !link.raft().cutDirections().isEmpty())
                .map(link -> key(link.from(), link.to())).toList().toString();
    }

    /** Closes every link (resetting their connections) and stops the proxy thread. */
    @Override
    public void close() {
        loop.close();
    }
}
