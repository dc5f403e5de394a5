package io.tidemark.it;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/**
 * Port ranges for clusters on 127.0.0.1: a base whose 3 nodes' ports (base + 10 n + 0, 1, 5) are free now.
 *
 * <p>The ranges lie below the kernel's ephemeral port range, so an outgoing connection (of this build, or of another
 * build on the machine) cannot take a port between the check here and the broker binding it, as it could with a
 * port the kernel picked ({@code new ServerSocket(0)}). Two test JVMs can still pick the same range at the same
 * moment; the random choice among 1,000s of ranges makes that unlikely.
 *
 * <p>Single ports for test fixtures (the link proxies of {@link NetworkLinks}) come from the same span but only from
 * the port numbers whose last digit no cluster range uses (2-4, 6-9), and they are bound at once rather than checked
 * and bound later, so they can neither take a port a cluster picked here nor lose theirs to one.
 */
final class FreePorts {
    private static final int LOWEST_BASE = 20_000;
    /** Linux's default first ephemeral port, used when the kernel's setting cannot be read. */
    private static final int DEFAULT_EPHEMERAL_START = 32_768;
    private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    private static final int[] NODE_PORT_OFFSETS = {0, 1, 5};
    private static final int NODES = 3;
    /** A single port is tried this many times at random before giving up: the span holds ~8,000 such ports. */
    private static final int BIND_ATTEMPTS = 100;

    private FreePorts() {
    }

    static int freeBasePort() {
        int ranges = (ephemeralStart() - LOWEST_BASE) / 10 - NODES;
        Random random = new Random();
        for (int attempt = 0; attempt < 100; attempt++) {
            int base = LOWEST_BASE + random.nextInt(ranges) * 10;
            if (allFree(base)) {
                return base;
            }
        }
        throw new IllegalStateException("no free port range found in 100 attempts");
    }

    /**
     * Binds {@code channel} to 127.0.0.1 at a free port below the ephemeral range whose last digit no cluster range
     * uses; returns the port.
     */
    static int bindAsideFromClusters(ServerSocketChannel channel) throws IOException {
        Random random = new Random();
        int span = ephemeralStart() - LOWEST_BASE;
        for (int attempt = 0; attempt < BIND_ATTEMPTS; attempt++) {
            int port = LOWEST_BASE + random.nextInt(span);
            if (usedByClusterRanges(port % 10)) {
                continue;
            }
            try {
                channel.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
                return port;
            } catch (BindException taken) {
                // another process has it; try another
            }
        }
        throw new IllegalStateException("no free port found in " + BIND_ATTEMPTS + " attempts");
    }

    private static boolean usedByClusterRanges(int lastDigit) {
        for (int offset : NODE_PORT_OFFSETS) {
            if (offset == lastDigit) {
                return true;
            }
        }
        return false;
    }

    private static int ephemeralStart() {
        try {
            int start = Integer.parseInt(Files.readString(EPHEMERAL_RANGE).trim().split("\\s+")[0]);
            return start > LOWEST_BASE + 1_000 ? start : DEFAULT_EPHEMERAL_START;
        } catch (IOException | RuntimeException e) {
            return DEFAULT_EPHEMERAL_START;
        }
    }

    private static boolean allFree(int base) {
        for (int node = 0; node < NODES; node++) {
            for (int offset : NODE_PORT_OFFSETS) {
                try (ServerSocket socket = new ServerSocket(base + 10 * node + offset)) {
                    socket.setReuseAddress(true);
                } catch (IOException e) {
                    return false;
                }
            }
        }
        return true;
    }
}
