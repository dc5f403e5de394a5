package io.tidemark.core.log;

import java.nio.ByteBuffer;

/**
 * Each thread's direct buffer that {@link PartitionLog#append} copies a batch into, to stamp it and write it: the
 * batch it is given stays as it is (a Raft entry's bytes are read-only), and the copy is the one the JDK would make
 * anyway to write a heap buffer to a file, into a direct buffer of its own. It grows to the largest batch the thread
 * appended (at most the largest batch a topic allows) and is reused, so an append allocates nothing.
 */
final class StagingBuffer {
    private static final ThreadLocal<ByteBuffer> BUFFERS = ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(0));

    private StagingBuffer() {
    }

    /** This thread's buffer holding a copy of {@code bytes} (position to limit), from position 0. */
    static ByteBuffer copyOf(ByteBuffer bytes) {
        int size = bytes.remaining();
        ByteBuffer buffer = BUFFERS.get();
        if (buffer.capacity() < size) {
            buffer = ByteBuffer.allocateDirect(Math.max(size, Math.min(2 * buffer.capacity(), Integer.MAX_VALUE / 2)));
            BUFFERS.set(buffer);
        }
        return buffer.clear().put(bytes.duplicate()).flip();
    }
}
