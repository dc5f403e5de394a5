package io.tidemark.replication.cluster;

import com.google.protobuf.InvalidProtocolBufferException;
import io.tidemark.core.topic.Topic;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MetadataCommand;
import io.tidemark.proto.v1.MetadataReply;
import io.tidemark.proto.v1.PartitionGroupRecord;
import io.tidemark.proto.v1.TopicAssignment;
import io.tidemark.replication.statemachine.MetadataStateMachine;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

import java.io.Closeable;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * This broker's way into the metadata group: submits commands through a Raft client (which finds the group's
 * leader) and reads the locally applied state.
 *
 * <p>Thread-safe. Submissions go one at a time: Ratis' blocking client is not safe for concurrent calls while it
 * looks for the leader (one call resetting a failed peer's proxy left another's send with none, a
 * NullPointerException inside Ratis' GrpcClientRpc, when an admin's CreateTopic met the broker's own creation of
 * {@code __group_offsets} during a cluster's first election). Metadata commands are few, and the group commits them
 * one after the other anyway.
 */
public final class MetadataGroup implements Closeable {
    private final RaftClient client;
    private final MetadataStateMachine stateMachine;

    public MetadataGroup(RaftClient client, MetadataStateMachine stateMachine) {
        this.client = client;
        this.stateMachine = stateMachine;
    }

    /**
     * Commits a command.
     *
     * @return the index of the command's entry in the metadata log
     * @throws TidemarkException the error the state machine answered, or NOT_AVAILABLE when the group has no quorum
     */
    public long submit(MetadataCommand command) {
        RaftClientReply reply;
        try {
            synchronized (client) {
                reply = client.io().send(Message.valueOf(UnsafeByteOperations.unsafeWrap(command.toByteArray())));
            }
        } catch (IOException e) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the cluster's metadata group did not commit the "
                    + "change (is a majority of the brokers up?): " + e.getMessage());
        }
        if (!reply.isSuccess()) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the cluster's metadata group refused the change: "
                    + reply.getException());
        }
        try {
            MetadataReply answer = MetadataReply.parseFrom(reply.getMessage().getContent().toByteArray());
            if (answer.hasError()) {
                throw new TidemarkException(answer.getError().getCode(), answer.getError().getMessage());
            }
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("unreadable metadata reply", e);
        }
        return reply.getLogIndex();
    }

    /**
     * Commits a command and waits until this broker applied it too (the leader may apply it first), so what this
     * broker reads afterwards holds the change, whatever other commands came before or after it.
     */
    public void submitAndApply(MetadataCommand command, Duration timeout, String what) {
        long index = submit(command);
        await(() -> appliedIndex() >= index, timeout, what);
    }

    /** A topic's assignment as applied on this broker. */
    public TopicAssignment assignment(String name) {
        return stateMachine.topic(name).orElseThrow(() -> Topic.unknown(name));
    }

    /** The topics as applied on this broker, sorted by name. */
    List<TopicAssignment> topics() {
        return stateMachine.topics();
    }

    /** A partition group as applied on this broker; empty when it is not known (any more). */
    Optional<PartitionGroupRecord> group(UUID id) {
        return stateMachine.group(id);
    }

    /**
     * The index of the last metadata entry applied on this broker: what this broker's view of the topics (read
     * after it) holds at least.
     */
    long appliedIndex() {
        TermIndex applied = stateMachine.getLastAppliedTermIndex();
        return applied == null ? -1 : applied.getIndex();
    }

    /** Waits until a committed change is applied here too (the leader may apply it first). */
    void await(BooleanSupplier applied, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!applied.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "timed out after " + timeout.toSeconds()
                        + " s waiting for " + what);
            }
            try {
                TimeUnit.MILLISECONDS.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "interrupted waiting for " + what);
            }
        }
    }

    @Override
    public void close() throws IOException {
        client.close();
    }
}
