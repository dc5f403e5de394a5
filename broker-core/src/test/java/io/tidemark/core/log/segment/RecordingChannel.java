package io.tidemark.core.log.segment;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A log file's channel that records the calls a segment makes on it ("write", "force", "truncate", "close") and
 * can fail its fsyncs, over a real channel. Only what {@link OpenSegment} uses is supported.
 */
final class RecordingChannel extends FileChannel {
    private final FileChannel file;
    private final Optional<IOException> forceFailure;
    private final List<String> calls = new ArrayList<>();

    /** @param forceFailure what every {@link #force} throws, or empty when fsyncs succeed */
    RecordingChannel(FileChannel file, Optional<IOException> forceFailure) {
        this.file = file;
        this.forceFailure = forceFailure;
    }

    synchronized List<String> calls() {
        return List.copyOf(calls);
    }

    private synchronized void record(String call) {
        calls.add(call);
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
        return file.read(dst, position);
    }

    @Override
    public int write(ByteBuffer src, long position) throws IOException {
        record("write");
        return file.write(src, position);
    }

    @Override
    public void force(boolean metaData) throws IOException {
        record("force");
        if (forceFailure.isPresent()) {
            throw forceFailure.get();
        }
        file.force(metaData);
    }

    @Override
    public FileChannel truncate(long size) throws IOException {
        record("truncate");
        file.truncate(size);
        return this;
    }

    @Override
    public long size() throws IOException {
        return file.size();
    }

    @Override
    protected void implCloseChannel() throws IOException {
        record("close");
        file.close();
    }

    @Override
    public int read(ByteBuffer dst) {
        throw new UnsupportedOperationException();
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) {
        throw new UnsupportedOperationException();
    }

    @Override
    public int write(ByteBuffer src) {
        throw new UnsupportedOperationException();
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) {
        throw new UnsupportedOperationException();
    }

    @Override
    public long position() {
        throw new UnsupportedOperationException();
    }

    @Override
    public FileChannel position(long newPosition) {
        throw new UnsupportedOperationException();
    }

    @Override
    public long transferTo(long position, long count, WritableByteChannel target) {
        throw new UnsupportedOperationException();
    }

    @Override
    public long transferFrom(ReadableByteChannel src, long position, long count) {
        throw new UnsupportedOperationException();
    }

    @Override
    public MappedByteBuffer map(MapMode mode, long position, long size) {
        throw new UnsupportedOperationException();
    }

    @Override
    public FileLock lock(long position, long size, boolean shared) {
        throw new UnsupportedOperationException();
    }

    @Override
    public FileLock tryLock(long position, long size, boolean shared) {
        throw new UnsupportedOperationException();
    }
}
