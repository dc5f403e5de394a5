package io.tidemark.cli;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/**
 * A port no one listens on now, picked by the OS, for a broker asked to listen on port 0: its address must be known
 * before it starts (its Raft groups name it). Another process may take the port between this and the bind; the
 * broker then fails to start, saying which address is in use.
 */
final class FreePort {
    private FreePort() {
    }

    static int pick(String host) throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(host))) {
            return socket.getLocalPort();
        }
    }
}
