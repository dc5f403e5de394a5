package io.tidemark.replication.snapshot;

import io.tidemark.core.log.DurableFiles;
import io.tidemark.proto.v1.MetadataSnapshot;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A snapshot of a member of the metadata group on disk: every topic and partition group after a Raft entry
 * (cluster.proto, {@code MetadataSnapshot}), in {@code snapshot.TERM_INDEX} of the group's state machine directory,
 * named as Ratis' {@code SimpleStateMachineStorage} finds the latest snapshot. Unlike a partition group's snapshot it
 * holds the whole state: the member restarts from it and replays only the entries after it, and Ratis purges the
 * entries up to it.
 *
 * <h2>Format</h2>
 * A {@link SnapshotEnvelope} of version 1 around a {@code MetadataSnapshot}: topics sorted by name, partition groups
 * by replica list and slot, so the same state always gives the same bytes.
 *
 * <p>Stateless.
 */
public final class MetadataSnapshotFile {
    static final int VERSION = 1;
    private static final String KIND = "a metadata snapshot";

    private MetadataSnapshotFile() {
    }

    static byte[] encode(MetadataSnapshot snapshot) {
        return SnapshotEnvelope.encode(VERSION, snapshot);
    }

    /** @throws IOException naming {@code what} when the bytes are not a whole snapshot of this version */
    static MetadataSnapshot decode(byte[] bytes, Object what) throws IOException {
        return SnapshotEnvelope.decode(bytes, VERSION, MetadataSnapshot.parser(), what, KIND);
    }

    public static void write(Path file, MetadataSnapshot snapshot) throws IOException {
        DurableFiles.writeAtomically(file, encode(snapshot));
    }

    /** @throws IOException naming the file when it is missing or not a whole snapshot */
    public static MetadataSnapshot read(Path file) throws IOException {
        return decode(Files.readAllBytes(file), file);
    }
}
