package io.tidemark.it;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.Random;

/** Port ranges for clusters of broker processes: a base whose 3 nodes' ports (base + 10 n + 0, 1, 5) are free now. */
final class FreePorts {
    private FreePorts() {
    }

    static int freeBasePort() {
        Random random = new Random();
        for (int attempt = 0; attempt < 100; attempt++) {
            int base = 20_000 + random.nextInt(2_000) * 10;
            if (allFree(base)) {
                return base;
            }
        }
        throw new IllegalStateException("no free port range found in 100 attempts");
    }

    private static boolean allFree(int base) {
        for (int node = 0; node < 3; node++) {
            for (int offset : new int[] {0, 1, 5}) {
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
