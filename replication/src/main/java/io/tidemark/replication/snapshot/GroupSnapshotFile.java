package io.tidemark.replication.snapshot;

import io.tidemark.core.log.DurableFiles;
import io.tidemark.proto.v1.GroupSnapshot;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A snapshot of a replica of a partition group on disk: the partitions the group hosts and each one's log end offset
 * at a Raft entry (replica.proto, {@code GroupSnapshot}). Two files have this format:
 * <ul>
 *   <li>{@code snapshot.TERM_INDEX} in the group's state machine directory, named as Ratis'
 *       {@code SimpleStateMachineStorage} finds the latest snapshot (it keeps the MD5 of the content beside it). The
 *       snapshot's data are the partition logs themselves, up to the offsets the file holds.</li>
 *   <li>{@code installed} in a staged install ({@link StagedInstall}), the copy's commit point: its presence means
 *       the copied logs hold that snapshot.</li>
 * </ul>
 *
 * <h2>Format</h2>
 * A {@link SnapshotEnvelope} of version 2 around a {@code GroupSnapshot}. Version 1 was the snapshot of a group of
 * one partition (8 bytes: its log end offset); such a file is refused with a message that says so. Ratis purges its
 * log only behind a snapshot it was told of after the write returned.
 *
 * <p>Stateless.
 */
public final class GroupSnapshotFile {
    static final int VERSION = 2;
    /** A version 1 file: only a log end offset. */
    private static final int VERSION_1_BYTES = 8;
    private static final String KIND = "a group snapshot";

    private GroupSnapshotFile() {
    }

    static byte[] encode(GroupSnapshot snapshot) {
        return SnapshotEnvelope.encode(VERSION, snapshot);
    }

    /**
     * The snapshot {@code bytes} hold.
     *
     * @throws IOException naming {@code what} when they are not a whole snapshot of this version
     */
    static GroupSnapshot decode(byte[] bytes, Object what) throws IOException {
        if (bytes.length == VERSION_1_BYTES) {
            throw new IOException(what + " has 8 bytes: too short for " + KIND + " (it looks like a version 1 "
                    + "snapshot of a one-partition group, from before groups hosted many partitions: delete the "
                    + "broker's data directory to start it afresh)");
        }
        return SnapshotEnvelope.decode(bytes, VERSION, GroupSnapshot.parser(), what, KIND);
    }

    public static void write(Path file, GroupSnapshot snapshot) throws IOException {
        DurableFiles.writeAtomically(file, encode(snapshot));
    }

    /** @throws IOException when the file is missing or not a whole snapshot */
    public static GroupSnapshot read(Path file) throws IOException {
        return decode(Files.readAllBytes(file), file);
    }

    /**
     * The snapshot of the file; empty when it is missing or cannot be read whole: an install whose manifest is not
     * whole starts over rather than trusting it.
     */
    static Optional<GroupSnapshot> readIfWhole(Path file) {
        try {
            return Optional.of(read(file));
        } catch (IOException e) {
            return Optional.empty();
        }
    }
}
