package io.tidemark.proto.fuzz;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;

import java.util.List;
import java.util.SplittableRandom;

/**
 * Protobuf messages of any type with random fields, read from the type's descriptor: the well-formed inputs of the
 * targets that parse protobuf (requests, the stored group and transaction states, mirror state records). About half
 * the fields are set, repeated ones get up to three values, numbers are often boundary values, and nested messages
 * are filled down to a depth.
 *
 * <p>Stateless.
 */
public final class RandomMessages {
    private static final String[] STRINGS = {"", "t", "orders", "__group_offsets", "ü-ñ-名", "a/b/c",
            "x".repeat(300)};

    private RandomMessages() {
    }

    /** A message of {@code prototype}'s type with random fields, nested messages down to {@code depth} levels. */
    @SuppressWarnings("unchecked")
    public static <M extends Message> M fill(M prototype, SplittableRandom random, int depth) {
        Message.Builder builder = prototype.newBuilderForType();
        for (FieldDescriptor field : prototype.getDescriptorForType().getFields()) {
            if (random.nextBoolean()) {
                continue;
            }
            if (field.isRepeated()) {
                int count = random.nextInt(4);
                for (int i = 0; i < count; i++) {
                    Object value = value(builder, field, random, depth);
                    if (value != null) {
                        builder.addRepeatedField(field, value);
                    }
                }
            } else {
                Object value = value(builder, field, random, depth);
                if (value != null) {
                    builder.setField(field, value);
                }
            }
        }
        return (M) builder.build();
    }

    private static Object value(Message.Builder builder, FieldDescriptor field, SplittableRandom random, int depth) {
        return switch (field.getJavaType()) {
            case INT -> Mutator.interestingInt(random, 100);
            case LONG -> random.nextBoolean() ? Mutator.interestingLong(random) : random.nextLong();
            case FLOAT -> random.nextFloat();
            case DOUBLE -> random.nextDouble();
            case BOOLEAN -> random.nextBoolean();
            case STRING -> random.nextBoolean() ? STRINGS[random.nextInt(STRINGS.length)] : "s" + random.nextInt();
            case BYTE_STRING -> {
                byte[] bytes = new byte[random.nextInt(4) == 0 ? 16 : random.nextInt(40)];
                random.nextBytes(bytes);
                yield ByteString.copyFrom(bytes);
            }
            case ENUM -> {
                List<EnumValueDescriptor> values = field.getEnumType().getValues();
                yield values.get(random.nextInt(values.size()));
            }
            case MESSAGE -> depth <= 0 ? null
                    : fill(builder.newBuilderForField(field).getDefaultInstanceForType(), random, depth - 1);
        };
    }
}
