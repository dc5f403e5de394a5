package io.tidemark.proto.fuzz;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import io.tidemark.proto.v1.AdminServiceGrpc;
import io.tidemark.proto.v1.BrokerServiceGrpc;
import io.tidemark.proto.v1.ClusterServiceGrpc;
import io.tidemark.proto.v1.GroupServiceGrpc;
import io.tidemark.proto.v1.ProduceRequest;
import io.tidemark.proto.v1.ReplicaServiceGrpc;
import io.tidemark.proto.v1.TransactionServiceGrpc;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static io.tidemark.proto.fuzz.FuzzFailure.checkEquals;

/**
 * The request messages of every gRPC service of the API (broker, admin, group, transaction, cluster, replica), parsed
 * from any bytes as gRPC parses them: only {@link InvalidProtocolBufferException} escapes, and an accepted message
 * parses again from its own bytes to the same message. Protobuf's own job mostly; the inputs are random messages of
 * the request types (produce requests carry real batches) and each is parsed as three request types.
 *
 * <p>Stateless.
 */
public final class RequestMessagesFuzzTarget implements FuzzTarget {
    private static final List<Message> REQUESTS = requestPrototypes(AdminServiceGrpc.getServiceDescriptor(),
            BrokerServiceGrpc.getServiceDescriptor(), ClusterServiceGrpc.getServiceDescriptor(),
            GroupServiceGrpc.getServiceDescriptor(), ReplicaServiceGrpc.getServiceDescriptor(),
            TransactionServiceGrpc.getServiceDescriptor());
    private static final int PARSES = 3;

    private final BatchGenerator batches = new BatchGenerator(1_767_225_600_000L);

    @Override
    public String name() {
        return "requests";
    }

    @Override
    public byte[] valid(SplittableRandom random, StringBuilder how) {
        if (random.nextInt(4) == 0) {
            how.append("ProduceRequest of a ");
            return ProduceRequest.newBuilder().setTopic("t").setPartition(random.nextInt(4))
                    .setBatch(ByteString.copyFrom(batches.any(random, how))).build().toByteArray();
        }
        Message prototype = REQUESTS.get(random.nextInt(REQUESTS.size()));
        how.append("random ").append(prototype.getDescriptorForType().getName());
        return RandomMessages.fill(prototype, random, 3).toByteArray();
    }

    @Override
    public String run(byte[] input) throws InvalidProtocolBufferException {
        int first = Math.floorMod(java.util.Arrays.hashCode(input), REQUESTS.size());
        int accepted = 0;
        for (int i = 0; i < PARSES; i++) {
            Message prototype = REQUESTS.get((first + i * 7) % REQUESTS.size());
            Message message;
            try {
                message = prototype.getParserForType().parseFrom(input);
            } catch (InvalidProtocolBufferException e) {
                continue;
            }
            checkEquals(message, prototype.getParserForType().parseFrom(message.toByteArray()),
                    prototype.getDescriptorForType().getName() + " parsed again");
            accepted++;
        }
        return accepted == 0 ? REFUSED + " InvalidProtocolBufferException" : ACCEPTED + " as " + accepted + " of "
                + PARSES;
    }

    /** The request type of every method of the services, once each. */
    private static List<Message> requestPrototypes(ServiceDescriptor... services) {
        Map<String, Message> prototypes = new LinkedHashMap<>();
        for (ServiceDescriptor service : services) {
            for (MethodDescriptor<?, ?> method : service.getMethods()) {
                if (method.getRequestMarshaller() instanceof MethodDescriptor.PrototypeMarshaller<?> marshaller
                        && marshaller.getMessagePrototype() instanceof Message message) {
                    prototypes.putIfAbsent(message.getDescriptorForType().getFullName(), message);
                }
            }
        }
        return new ArrayList<>(prototypes.values());
    }
}
