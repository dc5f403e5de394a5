package io.tidemark.replication.statemachine;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.BatchAdmission;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.fuzz.BatchGenerator;
import io.tidemark.proto.fuzz.FuzzTarget;
import io.tidemark.proto.fuzz.Mutator;
import io.tidemark.proto.fuzz.RandomMessages;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchValidatorFuzzTarget;
import io.tidemark.proto.record.TransactionMarker;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupChange;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.proto.v1.PartitionEnd;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.UUID;

import static io.tidemark.proto.fuzz.FuzzFailure.check;
import static io.tidemark.proto.fuzz.FuzzFailure.checkEquals;

/**
 * A partition group's requests ({@link GroupEntryFormat}) as a group leader takes them from its Raft port, where any
 * broker, or anything else that reaches the port, may send one: {@link GroupEntryFormat#checkRequest} refuses it with
 * INVALID_REQUEST or takes it, and a request it took is one no replica can fail to apply: its table, slots and batches
 * read back ({@link GroupEntryFormat#table}, {@link GroupEntryFormat#batches}, {@link GroupEntryFormat#slot}), the
 * slots' lengths cover the batches exactly, each batch is admitted or refused as a produced batch is
 * (CORRUPT_BATCH, RECORD_TOO_LARGE, INVALID_TIMESTAMP), the leader's stamp of the table shows through the entry, a
 * change holds a {@link GroupChange} ({@link GroupEntryFormat#readChange}) and a copy its header
 * ({@link GroupEntryFormat#readCopy}). A request arrives flat or in two pieces, as protobuf may join them.
 *
 * <p>The readers of the replies ({@link GroupEntryFormat#readReply}, {@link GroupEntryFormat#readCopyReply}) are not
 * fuzzed: they read what this version's state machine wrote for its own leader, not bytes anyone else forms.
 *
 * <p>Not thread-safe.
 */
public final class GroupEntryFormatFuzzTarget implements FuzzTarget {
    private static final Set<ErrorCode> ADMISSION_REFUSALS = EnumSet.of(ErrorCode.CORRUPT_BATCH,
            ErrorCode.RECORD_TOO_LARGE, ErrorCode.INVALID_TIMESTAMP);

    private final BatchGenerator batches = new BatchGenerator(RecordBatchValidatorFuzzTarget.NOW_MS);
    private final BatchAdmission admission = new BatchAdmission();
    private final TopicConfig config = TopicConfig.parse(Map.of());

    @Override
    public String name() {
        return "group-entry";
    }

    @Override
    public byte[] valid(SplittableRandom random, StringBuilder how) {
        int roll = random.nextInt(100);
        ByteString request;
        if (roll < 45) {
            List<GroupEntryFormat.Submitted> submitted = submitted(random, how, false);
            request = GroupEntryFormat.request(submitted);
        } else if (roll < 60) {
            request = GroupEntryFormat.allOrNone(submitted(random, how, true));
        } else if (roll < 85) {
            GroupChange change = change(random);
            how.append("change of ").append(change.getSerializedSize()).append(" bytes");
            request = GroupEntryFormat.change(change);
        } else {
            how.append("copy of ");
            byte[] copied = random.nextInt(4) == 0 ? new byte[0] : batches.any(random, how);
            request = GroupEntryFormat.copy(key(random), random.nextLong(0, 1L << 40), ByteBuffer.wrap(copied));
        }
        return request.toByteArray();
    }

    @Override
    public byte[] mutate(byte[] input, SplittableRandom random, StringBuilder how) {
        if (random.nextInt(3) == 0 && input.length > GroupEntryFormat.SLOTS_OFFSET) {
            byte[] bytes = input.clone();
            int at = random.nextBoolean() ? GroupEntryFormat.COUNT_OFFSET : Math.min(bytes.length - 1,
                    GroupEntryFormat.SLOTS_OFFSET + random.nextInt(GroupEntryFormat.SLOT_BYTES));
            return Mutator.putInt(bytes, at, Mutator.interestingInt(random, bytes.length), how);
        }
        return Mutator.mutate(input, random, how);
    }

    @Override
    public String run(byte[] input) {
        ByteString request = arrived(input);
        try {
            GroupEntryFormat.checkRequest(request);
        } catch (TidemarkException e) {
            checkEquals(ErrorCode.INVALID_REQUEST, e.code(), "the code of a refusal (" + e.getMessage() + ")");
            return REFUSED + " INVALID_REQUEST";
        }
        return switch (GroupEntryFormat.type(request)) {
            case GroupEntryFormat.BATCHES, GroupEntryFormat.ALL_OR_NONE ->
                    ACCEPTED + " batches, " + batchesRead(request);
            case GroupEntryFormat.CHANGE -> {
                GroupEntryFormat.readChange(request);
                yield ACCEPTED + " change";
            }
            default -> {
                GroupEntryFormat.Copy copy = GroupEntryFormat.readCopy(request.asReadOnlyByteBuffer());
                checkEquals(request.size() - GroupEntryFormat.COPY_BATCHES_OFFSET, copy.batches().remaining(),
                        "the copied batches' bytes");
                yield ACCEPTED + " copy";
            }
        };
    }

    /** Reads an accepted request of batches as the leader and the replicas do; how many batches admission took. */
    private String batchesRead(ByteString request) {
        int count = GroupEntryFormat.count(request);
        ByteBuffer table = GroupEntryFormat.table(request);
        List<ByteBuffer> read = GroupEntryFormat.batches(request);
        checkEquals(count, read.size(), "batches read from an accepted request");
        long bytes = GroupEntryFormat.tableBytes(count);
        int admitted = 0;
        for (int i = 0; i < count; i++) {
            GroupEntryFormat.Slot slot = GroupEntryFormat.slot(table, i);
            ByteBuffer batch = read.get(i);
            checkEquals(slot.length(), batch.remaining(), "batch " + i + "'s length");
            check(batch.remaining() >= RecordBatchFormat.HEADER_SIZE_BYTES, "batch " + i + " of " + batch.remaining()
                    + " bytes");
            bytes += batch.remaining();
            try {
                admission.admit(batch, config, Integer.MAX_VALUE);
                admitted++;
            } catch (TidemarkException e) {
                check(ADMISSION_REFUSALS.contains(e.code()), "batch " + i + " refused with " + e.code() + ": "
                        + e.getMessage());
            }
        }
        checkEquals((long) request.size(), bytes, "the table and batches' bytes");
        GroupEntryFormat.Stampable stampable = GroupEntryFormat.stampable(request);
        for (int i = 0; i < count; i++) {
            GroupEntryFormat.stamp(stampable.array(), i, RecordBatchValidatorFuzzTarget.NOW_MS + i, (short) i);
        }
        ByteBuffer stamped = GroupEntryFormat.table(stampable.data());
        List<ByteBuffer> stampedBatches = GroupEntryFormat.batches(stampable.data());
        for (int i = 0; i < count; i++) {
            GroupEntryFormat.Slot slot = GroupEntryFormat.slot(stamped, i);
            checkEquals(RecordBatchValidatorFuzzTarget.NOW_MS + i, slot.receiveTimeMs(), "slot " + i + "'s stamp");
            checkEquals(read.get(i), stampedBatches.get(i), "batch " + i + " of the stamped entry");
        }
        return admitted + " of " + count + " admitted";
    }

    /** The request as Ratis hands it over: flat, or in two pieces (chosen from its bytes, so always the same way). */
    private static ByteString arrived(byte[] input) {
        int hash = Arrays.hashCode(input);
        if (input.length < 2 || (hash & 1) == 0) {
            return ByteString.copyFrom(input);
        }
        int cut = Math.floorMod(hash >>> 1, input.length);
        return ByteString.copyFrom(input, 0, cut).concat(ByteString.copyFrom(input, cut, input.length - cut));
    }

    private List<GroupEntryFormat.Submitted> submitted(SplittableRandom random, StringBuilder how, boolean allOrNone) {
        int count = 1 + random.nextInt(3);
        List<GroupEntryFormat.Submitted> submitted = new ArrayList<>(count);
        how.append(allOrNone ? "all or none of " : "request of ");
        for (int i = 0; i < count; i++) {
            byte[] batch;
            if (allOrNone && random.nextBoolean()) {
                batch = BatchGenerator.bytes(TransactionMarker.build(random.nextLong(0, 1000), (short) 0,
                        random.nextBoolean(), 0, RecordBatchValidatorFuzzTarget.NOW_MS));
            } else {
                batch = allOrNone ? batches.plain(random, how, null, false) : batches.any(random, how);
            }
            how.append("; ");
            ByteBuffer buffer = ByteBuffer.wrap(batch);
            long min = RecordBatchFormat.firstSendTime(buffer, 0);
            boolean mirrored = RecordBatchFormat.mirrored(buffer, 0);
            try {
                BatchAdmission.Admitted admitted = admission.admit(buffer, config, Integer.MAX_VALUE);
                min = admitted.minSendTimeMs();
                mirrored = admitted.mirrored();
            } catch (TidemarkException e) {
                // a batch the leader would refuse still makes a well-formed request
            }
            submitted.add(new GroupEntryFormat.Submitted(new PartitionKey(new UUID(7, i), random.nextInt(4) + 4 * i),
                    buffer, min, RecordBatchFormat.maxSendTime(buffer, 0), mirrored));
        }
        return submitted;
    }

    private static GroupChange change(SplittableRandom random) {
        GroupChange.Builder change = RandomMessages.fill(GroupChange.getDefaultInstance(), random, 0).toBuilder()
                .setProducerIdExpirationMs(random.nextLong(0, Long.MAX_VALUE));
        for (int i = random.nextInt(3); i > 0; i--) {
            change.addAdd(partition(random));
        }
        if (random.nextBoolean()) {
            change.addActivate(PartitionEnd.newBuilder().setPartition(partition(random))
                    .setLogEndOffset(random.nextLong(0, 1000)));
        }
        if (random.nextInt(4) == 0) {
            change.addSeal(partition(random)).addRemove(partition(random)).addImport(partition(random))
                    .addConfigure(partition(random).toBuilder().putOverrides("retention.ms", "1000"));
        }
        return change.build();
    }

    private static GroupPartition partition(SplittableRandom random) {
        byte[] id = new byte[16];
        random.nextBytes(id);
        return GroupPartition.newBuilder().setTopic("t" + random.nextInt(100))
                .setTopicId(com.google.protobuf.ByteString.copyFrom(id)).setPartition(random.nextInt(64)).build();
    }

    private static PartitionKey key(SplittableRandom random) {
        return new PartitionKey(new UUID(random.nextLong(), random.nextLong()), random.nextInt(64));
    }
}
