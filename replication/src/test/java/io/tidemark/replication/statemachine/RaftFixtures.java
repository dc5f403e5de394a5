package io.tidemark.replication.statemachine;

import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.util.SizeInBytes;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

/** What a state machine gets from Ratis when a test drives it without Ratis: its storage and its server. */
final class RaftFixtures {
    private RaftFixtures() {
    }

    /** A member's Raft storage in {@code dir}, as Ratis recovers it at start; close it to let go of its lock. */
    static RaftStorage storage(Path dir) throws IOException {
        RaftStorage storage = RaftStorage.newBuilder().setDirectory(dir.toFile())
                .setOption(RaftStorage.StartupOption.RECOVER).setStorageFreeSpaceMin(SizeInBytes.ONE_MB).build();
        storage.initialize();
        return storage;
    }

    /**
     * A Raft server that only knows its id, all a state machine asks of it outside installs; asked for a group's
     * division (an install reads the next index of the member's log), it has none.
     */
    static RaftServer server(String name) {
        return server(name, () -> {
            throw new UnsupportedOperationException("snapshotManagementAsync");
        });
    }

    /** The same, which takes a snapshot by calling {@code takeSnapshot} when asked to create one. */
    static RaftServer server(String name, Callable<Long> takeSnapshot) {
        RaftPeerId id = RaftPeerId.valueOf(name);
        return (RaftServer) Proxy.newProxyInstance(RaftServer.class.getClassLoader(), new Class<?>[] {RaftServer.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("getId")) {
                        return id;
                    }
                    if (method.getName().equals("getDivision")) {
                        throw new IOException(name + " runs no Raft group in this test");
                    }
                    if (method.getName().equals("snapshotManagementAsync")) {
                        SnapshotManagementRequest request = (SnapshotManagementRequest) args[0];
                        long index = takeSnapshot.call();
                        return CompletableFuture.completedFuture(RaftClientReply.newBuilder()
                                .setClientId(request.getClientId()).setServerId(request.getServerId())
                                .setGroupId(request.getRaftGroupId()).setCallId(request.getCallId()).setSuccess()
                                .setLogIndex(index).build());
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }
}
