package io.tidemark.proto.fuzz;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Blind mutations of bytes, as AFL and libFuzzer make them: bit flips, bytes and big-endian integers replaced by
 * boundary values, varints of boundary values written over bytes, truncation, extension, ranges deleted, copied or
 * inserted, and two inputs spliced. Each describes itself into the report of a finding ({@code "int32 -1 @8"}: the
 * value and the position).
 *
 * <p>Stateless; randomness comes from the caller, so an input is made again from its seed.
 */
public final class Mutator {
    /** The int values that break length and count checks: signs, limits and the edges of small sizes. */
    static final int[] INTERESTING_INTS = {0, 1, -1, 2, 7, 8, 12, 16, 47, 48, 59, 60, 61, 64, 74, 127, 128, 255, 256,
            4096, 65535, 65536, 1 << 20, Integer.MAX_VALUE, Integer.MAX_VALUE - 1, Integer.MIN_VALUE,
            Integer.MIN_VALUE + 1, Short.MAX_VALUE, Short.MIN_VALUE, -2, -12, -60};
    static final long[] INTERESTING_LONGS = {0, 1, -1, -2, Long.MAX_VALUE, Long.MIN_VALUE, Long.MAX_VALUE - 1,
            Long.MIN_VALUE + 1, Integer.MAX_VALUE, Integer.MIN_VALUE, 1L << 32, 1_700_000_000_000L, 4_102_444_800_000L};
    static final byte[] INTERESTING_BYTES = {0, 1, -1, 0x7f, (byte) 0x80, 0x40, 0x10, 0x20, 0x30, 0x02, (byte) 0xfe};
    /** Varints that are too long, too large, or the largest a field allows; unsigned LEB128 bytes. */
    private static final byte[][] INTERESTING_VARINTS = {
            {0}, {1}, {2}, {0x7f}, {(byte) 0x80, 0x01}, {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x07},
            {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x0f},
            {(byte) 0xfe, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x0f},
            {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x01},
            {(byte) 0x80, 0x00}, {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff,
            (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x01},
            {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff,
                    (byte) 0xff, (byte) 0xff, 0x01},
            {(byte) 0x80}, {(byte) 0x81, (byte) 0x80, 0x00}};
    /** Inputs are kept small: a mutation never grows one past this, so one call's work stays small. */
    static final int MAX_LENGTH_BYTES = 64 * 1024;
    private static final int OPERATIONS = 13;

    private Mutator() {
    }

    /** One to four blind mutations of {@code input} (not changed; a new array is returned). */
    public static byte[] mutate(byte[] input, SplittableRandom random, StringBuilder how) {
        byte[] bytes = input;
        int count = 1 + (random.nextInt(3) == 0 ? random.nextInt(4) : 0);
        for (int i = 0; i < count; i++) {
            bytes = mutateOnce(bytes, random, how);
        }
        return bytes;
    }

    private static byte[] mutateOnce(byte[] input, SplittableRandom random, StringBuilder how) {
        if (input.length == 0) {
            return extend(input, random, how);
        }
        byte[] bytes = input.clone();
        switch (random.nextInt(OPERATIONS)) {
            case 0, 1 -> {
                int bit = random.nextInt(bytes.length * 8);
                bytes[bit / 8] ^= (byte) (1 << (bit % 8));
                how.append(" | flip bit ").append(bit);
            }
            case 2 -> {
                int at = random.nextInt(bytes.length);
                bytes[at] = random.nextBoolean() ? pick(INTERESTING_BYTES, random) : (byte) random.nextInt();
                how.append(" | byte ").append(bytes[at]).append(" @").append(at);
            }
            case 3 -> {
                return putInt(bytes, random.nextInt(bytes.length), interestingInt(random, bytes.length), how);
            }
            case 4 -> {
                return putLong(bytes, random.nextInt(bytes.length), pick(INTERESTING_LONGS, random), how);
            }
            case 5 -> {
                int at = random.nextInt(bytes.length);
                short value = (short) interestingInt(random, bytes.length);
                if (at + 2 <= bytes.length) {
                    ByteBuffer.wrap(bytes).putShort(at, value);
                    how.append(" | int16 ").append(value).append(" @").append(at);
                }
            }
            case 6 -> {
                return putVarint(bytes, random.nextInt(bytes.length), random, how);
            }
            case 7 -> {
                return truncate(bytes, random, how);
            }
            case 8 -> {
                return extend(bytes, random, how);
            }
            case 9 -> {
                int from = random.nextInt(bytes.length);
                int to = from + 1 + random.nextInt(Math.min(bytes.length - from, 16));
                how.append(" | delete ").append(from).append("..").append(to);
                byte[] shorter = new byte[bytes.length - (to - from)];
                System.arraycopy(bytes, 0, shorter, 0, from);
                System.arraycopy(bytes, to, shorter, from, bytes.length - to);
                return shorter;
            }
            case 10 -> {
                return insert(bytes, random, how);
            }
            case 11 -> {
                int length = 1 + random.nextInt(Math.min(bytes.length, 32));
                int from = random.nextInt(bytes.length - length + 1);
                int to = random.nextInt(bytes.length - length + 1);
                System.arraycopy(input, from, bytes, to, length);
                how.append(" | copy ").append(length).append(" bytes ").append(from).append("->").append(to);
            }
            default -> {
                int at = random.nextInt(bytes.length);
                int length = 1 + random.nextInt(Math.min(bytes.length - at, 8));
                Arrays.fill(bytes, at, at + length, pick(INTERESTING_BYTES, random));
                how.append(" | fill ").append(length).append(" x ").append(bytes[at]).append(" @").append(at);
            }
        }
        return bytes;
    }

    /** An int from {@link #INTERESTING_INTS}, or one near {@code length}, or small and random. */
    public static int interestingInt(SplittableRandom random, int length) {
        return switch (random.nextInt(4)) {
            case 0 -> length + random.nextInt(-16, 17);
            case 1 -> random.nextInt(-300, 300);
            default -> pick(INTERESTING_INTS, random);
        };
    }

    /** A long from {@link #INTERESTING_LONGS}, or small and random. */
    public static long interestingLong(SplittableRandom random) {
        return random.nextInt(3) == 0 ? random.nextLong(-100_000, 100_000) : pick(INTERESTING_LONGS, random);
    }

    /** Writes {@code value} big-endian at {@code at}, as far as it fits. */
    public static byte[] putInt(byte[] bytes, int at, int value, StringBuilder how) {
        for (int i = 0; i < 4 && at + i < bytes.length; i++) {
            bytes[at + i] = (byte) (value >>> (24 - 8 * i));
        }
        how.append(" | int32 ").append(value).append(" @").append(at);
        return bytes;
    }

    /** Writes {@code value} big-endian at {@code at}, as far as it fits. */
    public static byte[] putLong(byte[] bytes, int at, long value, StringBuilder how) {
        for (int i = 0; i < 8 && at + i < bytes.length; i++) {
            bytes[at + i] = (byte) (value >>> (56 - 8 * i));
        }
        how.append(" | int64 ").append(value).append(" @").append(at);
        return bytes;
    }

    /** Writes a varint of a boundary value over the bytes at {@code at}, as far as it fits. */
    public static byte[] putVarint(byte[] bytes, int at, SplittableRandom random, StringBuilder how) {
        byte[] varint = pick(INTERESTING_VARINTS, random);
        System.arraycopy(varint, 0, bytes, at, Math.min(varint.length, bytes.length - at));
        how.append(" | varint ").append(Hex.of(varint, varint.length)).append(" @").append(at);
        return bytes;
    }

    /** {@code a}'s start joined to {@code b}'s end, or the two whole one after the other. */
    public static byte[] splice(byte[] a, byte[] b, SplittableRandom random, StringBuilder how) {
        if (random.nextInt(4) == 0 || a.length == 0 || b.length == 0) {
            how.append(" | concatenated");
            return concat(a, b);
        }
        int cut = random.nextInt(a.length + 1);
        int from = random.nextInt(b.length + 1);
        how.append(" | spliced ").append(cut).append(" bytes + ").append(b.length - from).append(" from @")
                .append(from);
        return join(a, 0, cut, b, from, b.length - from);
    }

    /** {@code a} then {@code b}. */
    public static byte[] concat(byte[] a, byte[] b) {
        return join(a, 0, a.length, b, 0, b.length);
    }

    /** Random bytes, mostly short, some a few KiB; a few of boundary bytes only. */
    public static byte[] randomBytes(SplittableRandom random, StringBuilder how) {
        int length = switch (random.nextInt(8)) {
            case 0 -> random.nextInt(16);
            case 1, 2, 3, 4 -> random.nextInt(160);
            case 5, 6 -> random.nextInt(600);
            default -> random.nextInt(4096);
        };
        byte[] bytes = new byte[length];
        if (random.nextInt(5) == 0) {
            for (int i = 0; i < length; i++) {
                bytes[i] = pick(INTERESTING_BYTES, random);
            }
        } else {
            random.nextBytes(bytes);
        }
        how.append("random ").append(length).append(" bytes");
        return bytes;
    }

    private static byte[] truncate(byte[] bytes, SplittableRandom random, StringBuilder how) {
        int length = random.nextBoolean() ? bytes.length - 1 - random.nextInt(Math.min(bytes.length, 8))
                : random.nextInt(bytes.length);
        how.append(" | truncate to ").append(length);
        return Arrays.copyOf(bytes, length);
    }

    private static byte[] extend(byte[] bytes, SplittableRandom random, StringBuilder how) {
        int more = 1 + random.nextInt(random.nextInt(8) == 0 ? 512 : 16);
        if (bytes.length + more > MAX_LENGTH_BYTES) {
            return bytes;
        }
        byte[] longer = Arrays.copyOf(bytes, bytes.length + more);
        if (random.nextBoolean()) {
            byte[] tail = new byte[more];
            random.nextBytes(tail);
            System.arraycopy(tail, 0, longer, bytes.length, more);
        }
        how.append(" | extend by ").append(more);
        return longer;
    }

    private static byte[] insert(byte[] bytes, SplittableRandom random, StringBuilder how) {
        int at = random.nextInt(bytes.length + 1);
        int length = 1 + random.nextInt(16);
        if (bytes.length + length > MAX_LENGTH_BYTES) {
            return bytes;
        }
        byte[] inserted = new byte[length];
        if (random.nextBoolean() && bytes.length >= length) {
            System.arraycopy(bytes, random.nextInt(bytes.length - length + 1), inserted, 0, length);
        } else {
            random.nextBytes(inserted);
        }
        how.append(" | insert ").append(length).append(" @").append(at);
        return join(join(bytes, 0, at, inserted, 0, length), 0, at + length, bytes, at, bytes.length - at);
    }

    private static byte[] join(byte[] a, int aFrom, int aLength, byte[] b, int bFrom, int bLength) {
        byte[] joined = new byte[Math.min(aLength + bLength, MAX_LENGTH_BYTES)];
        System.arraycopy(a, aFrom, joined, 0, Math.min(aLength, joined.length));
        System.arraycopy(b, bFrom, joined, Math.min(aLength, joined.length), joined.length - Math.min(aLength,
                joined.length));
        return joined;
    }

    static int pick(int[] values, SplittableRandom random) {
        return values[random.nextInt(values.length)];
    }

    static long pick(long[] values, SplittableRandom random) {
        return values[random.nextInt(values.length)];
    }

    static byte pick(byte[] values, SplittableRandom random) {
        return values[random.nextInt(values.length)];
    }

    static <T> T pick(T[] values, SplittableRandom random) {
        return values[random.nextInt(values.length)];
    }
}
