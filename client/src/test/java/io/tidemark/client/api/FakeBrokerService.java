package io.tidemark.client.api;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.BrokerServiceGrpc;
import io.tidemark.proto.v1.FetchManyRequest;
import io.tidemark.proto.v1.FetchManyResponse;
import io.tidemark.proto.v1.FetchOutcome;
import io.tidemark.proto.v1.FetchPartition;
import io.tidemark.proto.v1.FetchRequest;
import io.tidemark.proto.v1.FetchResponse;
import io.tidemark.proto.v1.ListOffsetsRequest;
import io.tidemark.proto.v1.ListOffsetsResponse;
import io.tidemark.proto.v1.MetadataRequest;
import io.tidemark.proto.v1.MetadataResponse;
import io.tidemark.proto.v1.ProduceManyRequest;
import io.tidemark.proto.v1.ProduceManyResponse;
import io.tidemark.proto.v1.ProduceOutcome;
import io.tidemark.proto.v1.ProduceRequest;
import io.tidemark.proto.v1.ProduceResponse;
import io.tidemark.proto.v1.ProduceStreamRequest;
import io.tidemark.proto.v1.ProduceStreamResponse;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchReader;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.ErrorCode;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/** One fake node's BrokerService over the {@link FakeCluster}'s state. */
final class FakeBrokerService extends BrokerServiceGrpc.BrokerServiceImplBase {
    /** Longest a fake long poll waits, so tests never wait on the fake for long. */
    private static final long MAX_WAIT_MS = 200;

    private final FakeCluster cluster;
    private final int node;

    FakeBrokerService(FakeCluster cluster, int node) {
        this.cluster = cluster;
        this.node = node;
    }

    @Override
    public void produce(ProduceRequest request, StreamObserver<ProduceResponse> observer) {
        ByteBuffer batch = ByteBuffer.wrap(request.getBatch().toByteArray());
        List<Record> records = new RecordBatchReader().records(batch.duplicate());
        cluster.produceRequests.add(request.getTopic() + "-" + request.getPartition() + ":" + records.size());
        cluster.producedHeaders.add(new FakeCluster.ProducerFields(new TopicPartition(request.getTopic(),
                request.getPartition()), RecordBatchFormat.producerId(batch, 0),
                RecordBatchFormat.producerEpoch(batch, 0), RecordBatchFormat.baseSequence(batch, 0), records.size()));
        cluster.serve("Produce", node, observer, () -> {
            if (cluster.holdProduce) {
                cluster.heldReleases.add(new FakeCluster.HeldProduce(
                        () -> cluster.answer(observer, () -> append(request, records, observer)),
                        error -> observer.onError(GrpcErrors.toStatusException(error))));
                cluster.heldProduces.add(observer);
                return null;
            }
            if (cluster.holdRepliesAfterStore) {
                ProduceResponse stored = append(request, records, observer);
                cluster.heldReleases.add(new FakeCluster.HeldProduce(() -> cluster.answer(observer, () -> stored),
                        error -> observer.onError(GrpcErrors.toStatusException(error))));
                cluster.heldProduces.add(observer);
                return null;
            }
            return append(request, records, observer);
        });
    }

    private ProduceResponse append(ProduceRequest request, List<Record> records,
                                   StreamObserver<ProduceResponse> observer) {
        FakeLog log = cluster.ledLog(request.getTopic(), request.getPartition(), node);
        refuseRefusedValues(records);
        FakeLog.Appended appended = log.append(request.getBatch().asReadOnlyByteBuffer(), cluster.clock.millis());
        if (!appended.stored()) {
            return appended.response();
        }
        ProduceResponse response = appended.response();
        cluster.appended.add(node + ":" + request.getTopic() + "-" + request.getPartition() + ":"
                + (response.getLastOffset() - response.getBaseOffset() + 1));
        return cluster.takeLostReply() ? loseReply(observer) : response;
    }

    /**
     * Serves each batch as {@link #produce} would (with its injected failures, held answers and lost replies); a batch
     * whose call would have been cut or its reply lost cuts the whole call, as a connection that failed would.
     */
    @Override
    public void produceMany(ProduceManyRequest request, StreamObserver<ProduceManyResponse> observer) {
        cluster.produceManyCalls.add(node + ":" + request.getBatchesCount());
        List<CompletableFuture<ProduceOutcome>> outcomes = new ArrayList<>();
        for (ProduceRequest batch : request.getBatchesList()) {
            CompletableFuture<ProduceOutcome> outcome = new CompletableFuture<>();
            outcomes.add(outcome);
            produce(batch, new StreamObserver<>() {
                @Override
                public void onNext(ProduceResponse stored) {
                    outcome.complete(ProduceOutcome.newBuilder().setStored(stored).build());
                }

                @Override
                public void onError(Throwable failure) {
                    if (StatusProto.fromThrowable(failure) == null) {
                        outcome.completeExceptionally(failure);
                    } else {
                        outcome.complete(ProduceOutcome.newBuilder()
                                .setRefused(GrpcErrors.toDetail(GrpcErrors.fromThrowable(failure))).build());
                    }
                }

                @Override
                public void onCompleted() {
                }
            });
        }
        CompletableFuture.allOf(outcomes.toArray(CompletableFuture[]::new)).whenComplete((all, failure) -> {
            if (failure != null) {
                observer.onError(failure instanceof CompletionException ? failure.getCause() : failure);
                return;
            }
            ProduceManyResponse.Builder answer = ProduceManyResponse.newBuilder();
            outcomes.forEach(outcome -> answer.addOutcomes(outcome.join()));
            observer.onNext(answer.build());
            observer.onCompleted();
        });
    }

    /**
     * Serves each request of the stream as {@link #produceMany} would, in the order they come; a request whose call
     * would have been cut breaks the stream, as a connection that failed would. Refused with UNIMPLEMENTED while
     * {@link FakeCluster#noProduceStream} (a broker of an older version).
     */
    @Override
    public StreamObserver<ProduceStreamRequest> produceStream(StreamObserver<ProduceStreamResponse> observer) {
        if (cluster.noProduceStream) {
            observer.onError(Status.UNIMPLEMENTED.withDescription("Method not found: ProduceStream")
                    .asRuntimeException());
            return new StreamObserver<>() {
                @Override
                public void onNext(ProduceStreamRequest request) {
                }

                @Override
                public void onError(Throwable error) {
                }

                @Override
                public void onCompleted() {
                }
            };
        }
        cluster.produceStreams.incrementAndGet();
        return new StreamObserver<>() {
            private boolean broken;

            @Override
            public void onNext(ProduceStreamRequest request) {
                produceMany(request.getRequest(), new StreamObserver<>() {
                    @Override
                    public void onNext(ProduceManyResponse response) {
                        answer(ProduceStreamResponse.newBuilder().setCorrelationId(request.getCorrelationId())
                                .setResponse(response).build());
                    }

                    @Override
                    public void onError(Throwable error) {
                        breakStream(error);
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
            }

            private synchronized void answer(ProduceStreamResponse response) {
                if (!broken) {
                    observer.onNext(response);
                }
            }

            private synchronized void breakStream(Throwable error) {
                if (!broken) {
                    broken = true;
                    observer.onError(error);
                }
            }

            @Override
            public void onError(Throwable error) {
            }

            @Override
            public synchronized void onCompleted() {
                if (!broken) {
                    broken = true;
                    observer.onCompleted();
                }
            }
        };
    }

    /** Fails the call as a dropped connection would, with UNAVAILABLE and no Tidemark error detail. */
    private ProduceResponse loseReply(StreamObserver<ProduceResponse> observer) {
        String message = "the reply to a stored batch was lost";
        cluster.errorsSent.add(message);
        observer.onError(Status.UNAVAILABLE.withDescription(message).asRuntimeException());
        return null;
    }

    /** Refuses the whole batch, naming the record's index, when a record holds one of the refused values. */
    private void refuseRefusedValues(List<Record> records) {
        for (int i = 0; i < records.size(); i++) {
            byte[] value = records.get(i).value();
            String text = value == null ? "" : new String(value, StandardCharsets.UTF_8);
            ErrorCode code = cluster.refusedValues.get(text);
            if (value != null && code != null) {
                throw new TidemarkException(code, "record " + i + " of the batch holds the refused value " + text
                        + "; the whole batch was rejected");
            }
        }
    }

    @Override
    public void fetch(FetchRequest request, StreamObserver<FetchResponse> observer) {
        cluster.serve("Fetch", node, observer, () -> {
            FetchResponse now = readNow(request);
            if (!now.getBatches().isEmpty() || request.getMaxWaitMs() == 0) {
                return now;
            }
            cluster.scheduler.schedule(() -> {
                try {
                    observer.onNext(readNow(request));
                    observer.onCompleted();
                } catch (TidemarkException e) {
                    observer.onError(GrpcErrors.toStatusException(e));
                }
            }, Math.min(MAX_WAIT_MS, request.getMaxWaitMs()), TimeUnit.MILLISECONDS);
            return null;
        });
    }

    /**
     * Each partition read as {@link #fetch} reads it, or refused alone; when none has a record or an error, answered
     * after the (shortened) wait.
     */
    @Override
    public void fetchMany(FetchManyRequest request, StreamObserver<FetchManyResponse> observer) {
        cluster.serve("FetchMany", node, observer, () -> {
            FetchManyResponse now = readAll(request);
            boolean anything = now.getOutcomesList().stream()
                    .anyMatch(o -> o.hasRefused() || !o.getFetched().getBatches().isEmpty());
            if (anything || request.getMaxWaitMs() == 0) {
                return now;
            }
            cluster.scheduler.schedule(() -> {
                observer.onNext(readAll(request));
                observer.onCompleted();
            }, Math.min(MAX_WAIT_MS, request.getMaxWaitMs()), TimeUnit.MILLISECONDS);
            return null;
        });
    }

    private FetchManyResponse readAll(FetchManyRequest request) {
        FetchManyResponse.Builder answer = FetchManyResponse.newBuilder();
        for (FetchPartition partition : request.getPartitionsList()) {
            FetchRequest one = FetchRequest.newBuilder().setTopic(partition.getTopic())
                    .setPartition(partition.getPartition()).setOffset(partition.getOffset())
                    .setMaxBytes(partition.getMaxBytes()).setTopicId(partition.getTopicId()).build();
            try {
                answer.addOutcomes(FetchOutcome.newBuilder().setFetched(readNow(one)));
            } catch (TidemarkException e) {
                cluster.errorsSent.add(e.getMessage());
                answer.addOutcomes(FetchOutcome.newBuilder().setRefused(GrpcErrors.toDetail(e)));
            }
        }
        return answer.build();
    }

    /** A fetch's answer now, without waiting; refused as the fake's broker would. */
    private FetchResponse readNow(FetchRequest request) {
        FakeLog log = cluster.ledLog(request.getTopic(), request.getPartition(), node);
        UUID id = cluster.topicIds.get(request.getTopic());
        TopicIds.optional(request.getTopicId()).filter(asked -> !asked.equals(id)).ifPresent(asked -> {
            throw new TidemarkException(ErrorCode.UNKNOWN_TOPIC_ID, "topic '" + request.getTopic() + "' with id "
                    + asked + " was deleted and created again: it has id " + id + " now");
        });
        return read(log, request, id);
    }

    private FetchResponse read(FakeLog log, FetchRequest request, UUID topicId) {
        ByteString batches = log.read(request.getOffset(), request.getMaxBytes());
        if (cluster.corruptFetches && !batches.isEmpty()) {
            byte[] bytes = batches.toByteArray();
            bytes[RecordBatchFormat.RECORDS_OFFSET + 2] ^= 0x5a;
            batches = ByteString.copyFrom(bytes);
        }
        return FetchResponse.newBuilder().setBatches(batches).setHighWatermark(log.endOffset())
                .setLogStartOffset(0).setTopicId(TopicIds.toBytes(topicId)).build();
    }

    @Override
    public void listOffsets(ListOffsetsRequest request, StreamObserver<ListOffsetsResponse> observer) {
        cluster.serve("ListOffsets", node, observer,
                () -> cluster.ledLog(request.getTopic(), request.getPartition(), node).listOffsets(request));
    }

    @Override
    public void metadata(MetadataRequest request, StreamObserver<MetadataResponse> observer) {
        cluster.serve("Metadata", node, observer, () -> cluster.metadata(node, request.getTopicsList()));
    }
}
