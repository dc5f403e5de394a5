package io.tidemark.core.log.index;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;

/**
 * Unmaps a mapped buffer now, instead of when the garbage collector finds it unreachable: a map left to the
 * collector can outlive its use by as long as the old generation goes uncollected, and maps closed by eviction
 * would pile up past {@code vm.max_map_count} (Kafka unmaps its indexes the same way, for the same reason). Java 17
 * has no public API for it; {@code sun.misc.Unsafe.invokeCleaner} (module jdk.unsupported) is the supported
 * escape.
 *
 * <p>Touching the buffer after this crashes the JVM: callers unmap only what no thread can reach any more (a
 * segment's files with no lease left, a view closed by its only user).
 */
final class Unmapper {
    private static final MethodHandle INVOKE_CLEANER = invokeCleaner();

    private Unmapper() {
    }

    private static MethodHandle invokeCleaner() {
        try {
            Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
            Field theUnsafe = unsafeClass.getDeclaredField("theUnsafe");
            theUnsafe.setAccessible(true);
            return MethodHandles.lookup().findVirtual(unsafeClass, "invokeCleaner",
                    MethodType.methodType(void.class, ByteBuffer.class)).bindTo(theUnsafe.get(null));
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot unmap index files: sun.misc.Unsafe.invokeCleaner (module "
                    + "jdk.unsupported) is not available in this JVM", e);
        }
    }

    static void unmap(MappedByteBuffer buffer) {
        try {
            INVOKE_CLEANER.invokeExact((ByteBuffer) buffer);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("unmapping an index failed", e);
        }
    }
}
