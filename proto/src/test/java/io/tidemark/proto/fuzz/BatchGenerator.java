package io.tidemark.proto.fuzz;

import io.tidemark.proto.record.Header;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.ProvenanceHeaders;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.TransactionMarker;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.zip.CRC32C;

import static io.tidemark.proto.record.RecordBatchFormat.*;

/**
 * Record batches for fuzzing: well-formed ones as producers, mirrors and the transaction coordinator build them
 * ({@link RecordBatchBuilder}, {@link ProvenanceHeaders}, {@link TransactionMarker}), with random records (keys and
 * values null, empty or not, headers, SendTimes in and far out of any window, out of order), idempotent producers,
 * transactions and markers; mutations aimed at the batch's fields ({@link #mutateField}); and the repair that lets a
 * mutated batch past its CRC ({@link #repair}).
 *
 * <p>Stateless but for the time SendTimes are drawn around; randomness comes from the caller.
 */
public final class BatchGenerator {
    private static final String CLUSTER_CHARACTERS =
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
    /** Header names, the provenance header's among them (on a batch that is not mirrored, a producer's doing). */
    private static final String[] HEADER_NAMES = {"h", "trace-id", "", "ü-ñ-名", ProvenanceHeaders.NAME,
            "content-type"};
    private static final long DAY_MS = 86_400_000L;
    /** The fields of the header a mutation aims at: offset and width in bytes. */
    private static final int[][] FIELDS = {{BATCH_LENGTH_OFFSET, 4}, {CRC_OFFSET, 4}, {MAGIC_OFFSET, 1},
            {ATTRIBUTES_OFFSET, 1}, {PRODUCER_EPOCH_OFFSET, 2}, {RECORD_COUNT_OFFSET, 4}, {RECEIVE_TIME_OFFSET, 8},
            {FIRST_SEND_TIME_OFFSET, 8}, {MAX_SEND_TIME_OFFSET, 8}, {PRODUCER_ID_OFFSET, 8},
            {BASE_SEQUENCE_OFFSET, 4}};
    private static final byte[] ATTRIBUTES = {0, ATTRIBUTE_TRANSACTIONAL, ATTRIBUTE_CONTROL,
            ATTRIBUTE_TRANSACTIONAL | ATTRIBUTE_CONTROL, ATTRIBUTE_MIRRORED,
            ATTRIBUTE_MIRRORED | ATTRIBUTE_TRANSACTIONAL, ATTRIBUTE_MIRRORED | ATTRIBUTE_CONTROL, 0x01, 0x07,
            (byte) 0x80, 0x08, 0x70};

    private final long nowMs;

    /** @param nowMs the time SendTimes are drawn around: a broker's ReceiveTime */
    public BatchGenerator(long nowMs) {
        this.nowMs = nowMs;
    }

    /** An idempotent producer's identity, and the sequence of its next batch. */
    public record Producer(long id, short epoch, int sequence) {
    }

    /**
     * Any batch a client, a mirror or the coordinator sends: plain (45%), of an idempotent producer (20%),
     * transactional (10%), mirrored (15%, half of them by an idempotent producer, as mirrors write) or a transaction
     * marker (10%).
     */
    public byte[] any(SplittableRandom random, StringBuilder how) {
        int roll = random.nextInt(100);
        if (roll < 45) {
            return plain(random, how, null, false);
        }
        if (roll < 65) {
            return plain(random, how, producer(random), false);
        }
        if (roll < 75) {
            return plain(random, how, producer(random), true);
        }
        if (roll < 90) {
            return mirrored(random, how, random.nextBoolean() ? producer(random) : null, origin(random),
                    random.nextLong(0, random.nextBoolean() ? 1000 : Long.MAX_VALUE / 2));
        }
        return marker(random, how, producer(random), random.nextInt());
    }

    /** A producer of random id and epoch, its sequence anywhere, some about to wrap past {@link Integer#MAX_VALUE}. */
    public Producer producer(SplittableRandom random) {
        long id = random.nextBoolean() ? random.nextLong(0, 100) : random.nextLong(0, Long.MAX_VALUE);
        short epoch = (short) (random.nextBoolean() ? random.nextInt(3) : random.nextInt(Short.MAX_VALUE + 1));
        int sequence = switch (random.nextInt(4)) {
            case 0 -> 0;
            case 1 -> Integer.MAX_VALUE - random.nextInt(10);
            default -> random.nextInt(Integer.MAX_VALUE);
        };
        return new Producer(id, epoch, sequence);
    }

    /** An origin partition of a random cluster, topic, topic id and partition. */
    public OriginPartition origin(SplittableRandom random) {
        StringBuilder cluster = new StringBuilder();
        int length = random.nextInt(8) == 0 ? 64 : 1 + random.nextInt(8);
        for (int i = 0; i < length; i++) {
            cluster.append(CLUSTER_CHARACTERS.charAt(random.nextInt(CLUSTER_CHARACTERS.length())));
        }
        String topic = random.nextInt(4) == 0 ? "tøpic-" + random.nextInt(100) : "t" + random.nextInt(1000);
        return new OriginPartition(cluster.toString(), topic, new UUID(random.nextLong(), random.nextLong()),
                random.nextBoolean() ? random.nextInt(8) : random.nextInt(Integer.MAX_VALUE));
    }

    /** A batch of random records, of {@code producer} when not null, in its transaction when {@code transactional}. */
    public byte[] plain(SplittableRandom random, StringBuilder how, Producer producer, boolean transactional) {
        RecordBatchBuilder builder = builder(random, producer);
        if (transactional) {
            builder.transactional();
        }
        int count = recordCount(random);
        long sendTime = firstSendTime(random);
        for (int i = 0; i < count; i++) {
            builder.append(sendTime, key(random), value(random), headers(random));
            sendTime = nextSendTime(random, sendTime);
        }
        how.append(transactional ? "transactional" : producer != null ? "idempotent" : "plain").append(" batch of ")
                .append(count).append(" records").append(producer == null ? "" : ", producer " + producer);
        return bytes(builder.build());
    }

    /**
     * A mirrored batch of {@code origin}: records copied from origin offsets {@code firstOriginOffset} on, strictly
     * increasing with gaps, each with its provenance header after its own headers (some of them copied before, so
     * their path is longer than one cluster).
     */
    public byte[] mirrored(SplittableRandom random, StringBuilder how, Producer producer, OriginPartition origin,
                           long firstOriginOffset) {
        RecordBatchBuilder builder = builder(random, producer).mirrored();
        int count = recordCount(random);
        long originOffset = firstOriginOffset;
        long originReceiveTime = Math.max(0, nowMs - random.nextLong(0, random.nextBoolean() ? 60_000 : 3 * DAY_MS));
        long sendTime = Math.max(0, originReceiveTime - random.nextLong(0, 5_000));
        for (int i = 0; i < count; i++) {
            List<Header> headers = headers(random);
            if (random.nextInt(8) == 0) {
                headers = ProvenanceHeaders.forCopy(headers, origin(random), random.nextLong(0, 1_000_000),
                        Math.max(0, originReceiveTime - random.nextLong(0, DAY_MS)));
            }
            builder.append(sendTime, key(random), value(random), ProvenanceHeaders.forCopy(headers, origin,
                    originOffset, originReceiveTime));
            originOffset += 1 + (random.nextInt(4) == 0 ? random.nextInt(1000) : 0);
            originReceiveTime += random.nextInt(3);
            sendTime = Math.max(0, originReceiveTime - random.nextLong(0, random.nextInt(10) == 0 ? 2 * DAY_MS : 500));
        }
        how.append("mirrored batch of ").append(count).append(" records from ").append(origin).append(" @")
                .append(firstOriginOffset).append(producer == null ? "" : ", producer " + producer);
        return bytes(builder.build());
    }

    /** A transaction marker of {@code producer}, commit or abort, decided around now. */
    public byte[] marker(SplittableRandom random, StringBuilder how, Producer producer, int coordinatorEpoch) {
        boolean commit = random.nextBoolean();
        how.append(commit ? "commit" : "abort").append(" marker of ").append(producer).append(", coordinator epoch ")
                .append(coordinatorEpoch);
        return bytes(TransactionMarker.build(producer.id(), producer.epoch(), commit, coordinatorEpoch,
                firstSendTime(random)));
    }

    /**
     * Sets one of the batch's header fields to a boundary value (a length, a count, attributes, a time next to the
     * one there), or writes a boundary varint over a record's length or one of its fields.
     */
    public static byte[] mutateField(byte[] input, SplittableRandom random, StringBuilder how) {
        byte[] bytes = input.clone();
        if (bytes.length > HEADER_SIZE_BYTES && random.nextInt(3) == 0) {
            List<Integer> starts = recordStarts(bytes);
            int start = starts.get(random.nextInt(starts.size()));
            return Mutator.putVarint(bytes, Math.min(bytes.length - 1, start + (random.nextBoolean() ? 0
                    : random.nextInt(6))), random, how);
        }
        int[] field = FIELDS[random.nextInt(FIELDS.length)];
        int at = field[0];
        if (at + field[1] > bytes.length) {
            return Mutator.mutate(bytes, random, how);
        }
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        switch (field[1]) {
            case 1 -> {
                byte value = at == ATTRIBUTES_OFFSET ? ATTRIBUTES[random.nextInt(ATTRIBUTES.length)]
                        : Mutator.pick(Mutator.INTERESTING_BYTES, random);
                buffer.put(at, value);
                how.append(" | field @").append(at).append(" = ").append(value);
            }
            case 2 -> {
                short value = (short) Mutator.interestingInt(random, bytes.length);
                buffer.putShort(at, value);
                how.append(" | field @").append(at).append(" = ").append(value);
            }
            case 4 -> {
                int value = random.nextBoolean() ? buffer.getInt(at) + random.nextInt(-3, 4)
                        : Mutator.interestingInt(random, bytes.length);
                buffer.putInt(at, value);
                how.append(" | field @").append(at).append(" = ").append(value);
            }
            default -> {
                long value = random.nextBoolean() ? buffer.getLong(at) + random.nextLong(-1001, 1002)
                        : Mutator.interestingLong(random);
                buffer.putLong(at, value);
                how.append(" | field @").append(at).append(" = ").append(value);
            }
        }
        return bytes;
    }

    /**
     * Lets some broken batches past the checks that stop them first: a random one gets a magic and attributes a batch
     * may have (30%), the batch length is set to the bytes there are (20%), and the CRC is recomputed over what the
     * batch length covers (75%): the checks behind the CRC, of the attributes and every record, then see the mutation.
     */
    public static byte[] repair(byte[] input, SplittableRandom random, StringBuilder how) {
        if (input.length < HEADER_SIZE_BYTES) {
            return input;
        }
        byte[] bytes = input.clone();
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        if (buffer.get(MAGIC_OFFSET) != MAGIC_V1 && random.nextInt(10) < 3) {
            buffer.put(MAGIC_OFFSET, MAGIC_V1).put(ATTRIBUTES_OFFSET, (byte) (buffer.get(ATTRIBUTES_OFFSET)
                    & ATTRIBUTE_MIRRORED));
            how.append(" | magic and attributes set");
        }
        if (random.nextInt(5) == 0) {
            buffer.putInt(BATCH_LENGTH_OFFSET, bytes.length - LOG_OVERHEAD_BYTES);
            how.append(" | length set");
        }
        int total = LOG_OVERHEAD_BYTES + buffer.getInt(BATCH_LENGTH_OFFSET);
        if (random.nextInt(4) < 3 && total >= HEADER_SIZE_BYTES && total <= bytes.length) {
            buffer.putInt(CRC_OFFSET, computeCrc(new CRC32C(), buffer, 0, total));
            how.append(" | CRC recomputed");
        }
        return bytes;
    }

    /** Where the records of a batch start, as far as their length varints can be read; at least the first. */
    private static List<Integer> recordStarts(byte[] bytes) {
        List<Integer> starts = new ArrayList<>();
        int at = RECORDS_OFFSET;
        while (at < bytes.length && starts.size() < 64) {
            starts.add(at);
            int length = 0;
            int shift = 0;
            int next = at;
            while (next < bytes.length && shift < 28) {
                byte b = bytes[next++];
                length |= (b & 0x7f) << shift;
                shift += 7;
                if (b >= 0) {
                    break;
                }
            }
            if (length <= 0) {
                break;
            }
            at = next + length;
        }
        return starts;
    }

    private static RecordBatchBuilder builder(SplittableRandom random, Producer producer) {
        RecordBatchBuilder builder = new RecordBatchBuilder(random.nextBoolean() ? 64 : 1024);
        if (producer != null) {
            builder.producer(producer.id(), producer.epoch(), producer.sequence());
        }
        return builder;
    }

    private static int recordCount(SplittableRandom random) {
        int roll = random.nextInt(100);
        if (roll < 35) {
            return 1;
        }
        if (roll < 82) {
            return 2 + random.nextInt(7);
        }
        return roll < 98 ? 9 + random.nextInt(56) : 65 + random.nextInt(236);
    }

    /** Around now mostly; some days away; some at the epoch or far in the future. */
    private long firstSendTime(SplittableRandom random) {
        int roll = random.nextInt(100);
        if (roll < 70) {
            return nowMs + random.nextLong(-600_000, 600_000);
        }
        if (roll < 85) {
            return Math.max(0, nowMs + random.nextLong(-3 * DAY_MS, 3 * DAY_MS));
        }
        if (roll < 90) {
            return nowMs;
        }
        return roll < 95 ? random.nextLong(0, 1000) : random.nextLong(0, Long.MAX_VALUE / 4);
    }

    private static long nextSendTime(SplittableRandom random, long previous) {
        int roll = random.nextInt(100);
        long next;
        if (roll < 70) {
            next = previous + random.nextInt(51);
        } else if (roll < 90) {
            next = previous + random.nextInt(-5000, 5001);
        } else if (roll < 95) {
            next = previous;
        } else {
            next = previous + random.nextLong(-DAY_MS, DAY_MS);
        }
        return Math.max(0, next);
    }

    private static byte[] key(SplittableRandom random) {
        int roll = random.nextInt(100);
        return roll < 35 ? null : roll < 40 ? new byte[0] : randomBytes(random, 1 + random.nextInt(24));
    }

    private static byte[] value(SplittableRandom random) {
        int roll = random.nextInt(100);
        if (roll < 8) {
            return null;
        }
        if (roll < 15) {
            return new byte[0];
        }
        return randomBytes(random, roll < 98 ? random.nextInt(200) : 200 + random.nextInt(2800));
    }

    private static List<Header> headers(SplittableRandom random) {
        if (random.nextInt(100) < 65) {
            return List.of();
        }
        int count = 1 + random.nextInt(3);
        List<Header> headers = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            headers.add(new Header(HEADER_NAMES[random.nextInt(HEADER_NAMES.length)],
                    randomBytes(random, random.nextInt(17))));
        }
        return headers;
    }

    private static byte[] randomBytes(SplittableRandom random, int length) {
        byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    /** The bytes between a built batch's position and limit. */
    public static byte[] bytes(ByteBuffer batch) {
        byte[] bytes = new byte[batch.remaining()];
        batch.duplicate().get(bytes);
        return bytes;
    }
}
