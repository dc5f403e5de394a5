package io.tidemark.core.server;

import io.grpc.stub.ServerCallStreamObserver;
import io.tidemark.proto.v1.ProduceManyRequest;
import io.tidemark.proto.v1.ProduceManyResponse;
import io.tidemark.proto.v1.ProduceOutcome;
import io.tidemark.proto.v1.ProduceRequest;
import io.tidemark.proto.v1.ProduceResponse;
import io.tidemark.proto.v1.ProduceStreamRequest;
import io.tidemark.proto.v1.ProduceStreamResponse;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A ProduceStream over scripted partitions: the requests they are handed, and answers the test completes. */
class ProduceStreamCallTest {
    /** The topic of each request handed over, in the order handed. */
    private final List<String> handed = new ArrayList<>();
    private final List<CompletableFuture<ProduceManyResponse>> answers = new ArrayList<>();
    private final RecordingObserver responses = new RecordingObserver();
    private final ProduceStreamCall call = new ProduceStreamCall(request -> {
        handed.add(request.getBatches(0).getTopic());
        CompletableFuture<ProduceManyResponse> answer = new CompletableFuture<>();
        answers.add(answer);
        return answer;
    }, responses);

    private static ProduceStreamRequest request(long correlationId, String topic) {
        return ProduceStreamRequest.newBuilder().setCorrelationId(correlationId).setRequest(ProduceManyRequest
                .newBuilder().addBatches(ProduceRequest.newBuilder().setTopic(topic))).build();
    }

    private static ProduceManyResponse storedAt(long offset) {
        return ProduceManyResponse.newBuilder().addOutcomes(ProduceOutcome.newBuilder().setStored(ProduceResponse
                .newBuilder().setBaseOffset(offset).setLastOffset(offset))).build();
    }

    @Test
    void requestsGoToThePartitionsAsTheyComeAndAnswersGoBackAsTheyAreReadyWithTheirIds() {
        call.onNext(request(7, "a"));
        call.onNext(request(8, "b"));
        call.onNext(request(9, "c"));
        assertEquals(List.of("a", "b", "c"), handed, "each handed over before the next came");

        answers.get(1).complete(storedAt(20));
        answers.get(0).complete(storedAt(10));
        call.onCompleted();
        assertFalse(responses.completed, "one request is not answered yet");
        answers.get(2).complete(storedAt(30));

        assertEquals(List.of("8:20", "7:10", "9:30"), responses.sent);
        assertTrue(responses.completed, "the client closed its side and every request is answered");
    }

    @Test
    void aStreamTheClientCancelledSendsNothingMore() {
        call.onNext(request(1, "a"));
        call.onNext(request(2, "b"));
        answers.get(0).complete(storedAt(0));
        responses.cancelHandler.run();
        answers.get(1).complete(storedAt(1));
        call.onCompleted();

        assertEquals(List.of("1:0"), responses.sent);
        assertFalse(responses.completed);
        assertEquals(List.of("a", "b"), handed, "its requests were handed over all the same");
    }

    @Test
    void aClientThatClosesItsSideWithNothingOutstandingEndsTheStreamAtOnce() {
        call.onCompleted();
        assertTrue(responses.completed);
    }

    /**
     * The stream takes a window of requests and one more per answer: a client outrunning its partitions waits on
     * flow control instead of piling requests (each up to max.request.bytes) in the broker's heap.
     */
    @Test
    void theStreamTakesAWindowOfUnansweredRequestsAndOneMorePerAnswer() {
        assertTrue(responses.autoRequestDisabled);
        assertEquals(ProduceStreamCall.MAX_UNANSWERED, responses.requested, "before any request came");
        for (int i = 0; i < ProduceStreamCall.MAX_UNANSWERED; i++) {
            call.onNext(request(i, "t"));
        }
        assertEquals(ProduceStreamCall.MAX_UNANSWERED, responses.requested, "no more until one is answered");
        answers.get(3).complete(storedAt(3));
        assertEquals(ProduceStreamCall.MAX_UNANSWERED + 1, responses.requested);
    }

    /** The response side: what was sent as "CORRELATION:OFFSET", whether it was completed, its cancel handler. */
    private static final class RecordingObserver extends ServerCallStreamObserver<ProduceStreamResponse> {
        private final List<String> sent = new ArrayList<>();
        private boolean completed;
        private Runnable cancelHandler;
        private boolean autoRequestDisabled;
        /** Messages asked for, in all. */
        private int requested;

        @Override
        public void onNext(ProduceStreamResponse response) {
            if (completed) {
                throw new IllegalStateException("sent after the stream was completed");
            }
            sent.add(response.getCorrelationId() + ":" + response.getResponse().getOutcomes(0).getStored()
                    .getBaseOffset());
        }

        @Override
        public void onError(Throwable error) {
            throw new AssertionError("the stream failed", error);
        }

        @Override
        public void onCompleted() {
            completed = true;
        }

        @Override
        public void setOnCancelHandler(Runnable handler) {
            cancelHandler = handler;
        }

        @Override
        public boolean isCancelled() {
            return false;
        }

        @Override
        public void setCompression(String compression) {
        }

        @Override
        public boolean isReady() {
            return true;
        }

        @Override
        public void setOnReadyHandler(Runnable handler) {
        }

        @Override
        public void disableAutoInboundFlowControl() {
            autoRequestDisabled = true;
        }

        @Override
        public void disableAutoRequest() {
            autoRequestDisabled = true;
        }

        @Override
        public void request(int count) {
            requested += count;
        }

        @Override
        public void setMessageCompression(boolean enable) {
        }
    }
}
