package io.tidemark.core.server;

import io.grpc.stub.StreamObserver;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.group.GroupOffsetStore;
import io.tidemark.core.metrics.BrokerMetrics;
import io.tidemark.core.metrics.BrokerMetrics.TransactionCall;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.topic.Topics;
import io.tidemark.core.txn.TransactionCoordinator;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchValidator;
import io.tidemark.proto.record.RecordBatchValidator.SendTimeWindow;
import io.tidemark.proto.v1.AddPartitionsToTxnRequest;
import io.tidemark.proto.v1.AddPartitionsToTxnResponse;
import io.tidemark.proto.v1.EndTxnRequest;
import io.tidemark.proto.v1.EndTxnResponse;
import io.tidemark.proto.v1.InitProducerIdRequest;
import io.tidemark.proto.v1.InitProducerIdResponse;
import io.tidemark.proto.v1.TopicPartitionRef;
import io.tidemark.proto.v1.TransactionServiceGrpc;
import io.tidemark.proto.v1.TxnOffsetCommitRequest;
import io.tidemark.proto.v1.TxnOffsetCommitResponse;
import io.tidemark.proto.v1.WriteTxnMarkerRequest;
import io.tidemark.proto.v1.WriteTxnMarkerResponse;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/** Producer transactions over gRPC: the {@link TransactionCoordinator}'s calls, and markers written to partitions. */
final class TransactionServiceAdapter extends TransactionServiceGrpc.TransactionServiceImplBase {
    private final Topics topics;
    private final TransactionCoordinator coordinator;
    private final GroupOffsetStore store;
    private final BrokerConfig config;
    private final Responses responses;
    private final BrokerMetrics metrics;

    /** @param store where a transaction's offsets go: it bounds the number of groups ({@code group.max.count}) */
    TransactionServiceAdapter(Topics topics, TransactionCoordinator coordinator, GroupOffsetStore store,
                              BrokerConfig config, BrokerMetrics metrics) {
        this.topics = topics;
        this.store = store;
        this.coordinator = coordinator;
        this.config = config;
        this.responses = new Responses(metrics);
        this.metrics = metrics;
    }

    private <T> void timed(TransactionCall call, StreamObserver<T> observer, Callable<T> body) {
        responses.respondTimed(metrics.transactionLatency(call), observer, body);
    }

    @Override
    public void initProducerId(InitProducerIdRequest request, StreamObserver<InitProducerIdResponse> observer) {
        timed(TransactionCall.INIT_PRODUCER_ID, observer, () -> {
            TransactionCoordinator.ProducerIdAndEpoch producer = coordinator.initProducerId(
                    request.getTransactionalId(), request.getTransactionTimeoutMs());
            return InitProducerIdResponse.newBuilder().setProducerId(producer.producerId())
                    .setProducerEpoch(producer.epoch()).build();
        });
    }

    @Override
    public void addPartitionsToTxn(AddPartitionsToTxnRequest request,
                                   StreamObserver<AddPartitionsToTxnResponse> observer) {
        timed(TransactionCall.ADD_PARTITIONS, observer, () -> {
            if (request.getPartitionsCount() < 1 || request.getPartitionsCount() > config.maxOffsetsPerCommit()) {
                throw Responses.invalid("AddPartitionsToTxn names 1 to " + config.maxOffsetsPerCommit()
                        + " partitions (max.offsets.per.commit), not " + request.getPartitionsCount());
            }
            List<TopicPartition> partitions = new ArrayList<>(request.getPartitionsCount());
            for (TopicPartitionRef ref : request.getPartitionsList()) {
                partitions.add(new TopicPartition(ref.getTopic(), ref.getPartition()));
            }
            coordinator.addPartitions(request.getTransactionalId(), request.getProducerId(),
                    epoch(request.getProducerEpoch()), partitions);
            return AddPartitionsToTxnResponse.getDefaultInstance();
        });
    }

    @Override
    public void txnOffsetCommit(TxnOffsetCommitRequest request, StreamObserver<TxnOffsetCommitResponse> observer) {
        timed(TransactionCall.TXN_OFFSET_COMMIT, observer, () -> {
            GroupServiceAdapter.checkGroup(request.getGroup());
            store.checkRoomFor(request.getGroup(), config.groups().maxCount());
            coordinator.commitOffsets(request.getTransactionalId(), request.getProducerId(),
                    epoch(request.getProducerEpoch()), request.getGroup(), request.getMemberId(),
                    request.getMemberEpoch(), GroupServiceAdapter.offsets(topics, config, request.getOffsetsList()));
            return TxnOffsetCommitResponse.getDefaultInstance();
        });
    }

    @Override
    public void endTxn(EndTxnRequest request, StreamObserver<EndTxnResponse> observer) {
        timed(TransactionCall.END_TXN, observer, () -> {
            coordinator.endTransaction(request.getTransactionalId(), request.getProducerId(),
                    epoch(request.getProducerEpoch()), request.getCommit());
            return EndTxnResponse.getDefaultInstance();
        });
    }

    @Override
    public void writeTxnMarker(WriteTxnMarkerRequest request, StreamObserver<WriteTxnMarkerResponse> observer) {
        timed(TransactionCall.WRITE_MARKER, observer, () -> {
            ByteBuffer marker = request.getMarker().asReadOnlyByteBuffer();
            new RecordBatchValidator().validate(marker, marker.position(), marker.remaining(),
                    SendTimeWindow.UNBOUNDED);
            if (!RecordBatchFormat.control(marker, marker.position())) {
                throw Responses.invalid("WriteTxnMarker takes a transaction marker, not a batch of records");
            }
            long offset = topics.partition(request.getTopic(), request.getPartition()).append(marker).get()
                    .baseOffset();
            return WriteTxnMarkerResponse.newBuilder().setOffset(offset).build();
        });
    }

    private static short epoch(int epoch) {
        if (epoch < 0 || epoch > Short.MAX_VALUE) {
            throw Responses.invalid("producer epoch " + epoch + " is outside 0.." + Short.MAX_VALUE);
        }
        return (short) epoch;
    }
}
