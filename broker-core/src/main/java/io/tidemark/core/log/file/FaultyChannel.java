package io.tidemark.core.log.file;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;

/**
 * A file's channel with {@link DiskFaults} before each read, write, truncation and fsync; everything else (maps,
 * locks, positions) goes straight to the file's own channel.
 */
final class FaultyChannel extends FileChannel {
    private final FileChannel file;
    private final Path path;
    private final DiskFaults faults;

    FaultyChannel(FileChannel file, Path path, DiskFaults faults) {
        this.file = file;
        this.path = path;
        this.faults = faults;
    }

    private void check(DiskFaults.Operation operation) throws IOException {
        faults.check(path, operation);
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        check(DiskFaults.Operation.READ);
        return file.read(dst);
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        check(DiskFaults.Operation.READ);
        return file.read(dsts, offset, length);
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
        check(DiskFaults.Operation.READ);
        return file.read(dst, position);
    }

    @Override
    public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
        check(DiskFaults.Operation.READ);
        return file.transferTo(position, count, target);
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        check(DiskFaults.Operation.WRITE);
        return file.write(src);
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        check(DiskFaults.Operation.WRITE);
        return file.write(srcs, offset, length);
    }

    @Override
    public int write(ByteBuffer src, long position) throws IOException {
        check(DiskFaults.Operation.WRITE);
        return file.write(src, position);
    }

    @Override
    public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
        check(DiskFaults.Operation.WRITE);
        return file.transferFrom(src, position, count);
    }

    @Override
    public FileChannel truncate(long size) throws IOException {
        check(DiskFaults.Operation.WRITE);
        file.truncate(size);
        return this;
    }

    @Override
    public void force(boolean metaData) throws IOException {
        check(DiskFaults.Operation.FSYNC);
        file.force(metaData);
    }

    @Override
    public long position() throws IOException {
        return file.position();
    }

    @Override
    public FileChannel position(long newPosition) throws IOException {
        file.position(newPosition);
        return this;
    }

    @Override
    public long size() throws IOException {
        return file.size();
    }

    @Override
    public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
        return file.map(mode, position, size);
    }

    @Override
    public FileLock lock(long position, long size, boolean shared) throws IOException {
        return file.lock(position, size, shared);
    }

    @Override
    public FileLock tryLock(long position, long size, boolean shared) throws IOException {
        return file.tryLock(position, size, shared);
    }

    @Override
    protected void implCloseChannel() throws IOException {
        file.close();
    }
}
