package io.tidemark.client.api;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.tidemark.proto.auth.BearerToken;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client given a token sends it with every call, whichever of its calls it is (admin, produce, fetch); it refuses
 * to start with plain-text channels, and a call on a plain-text channel it was handed fails without sending it.
 */
class TokenTest {
    private static final long START_MS = 1_700_000_000_000L;
    private static final String TOKEN = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl";
    private static final String REFUSED = "token is set but the channels are plain text: a token is sent only over "
            + "TLS; set tls.ca.file (tls(TlsMaterial) on the builder)";

    @TempDir
    Path dir;

    private final ManualClock clock = new ManualClock(START_MS);
    private FakeCluster cluster;
    private BearerToken token;

    @BeforeEach
    void start() throws IOException {
        cluster = new FakeCluster(2, clock);
        cluster.createTopic("t", 2);
        token = BearerToken.fromFile(Files.writeString(dir.resolve("client.token"), TOKEN + "\n"), clock);
    }

    @AfterEach
    void stop() throws InterruptedException {
        cluster.close();
    }

    @Test
    void everyCallOfEveryClientCarriesTheToken() throws Exception {
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(cluster.bootstrap())
                .channelFactory(cluster::channel).token(token).build());
             TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(cluster.bootstrap()).clock(clock)
                     .channelFactory(cluster::channel).token(token).lingerMs(0).build());
             TidemarkConsumer consumer = new TidemarkConsumer(ConsumerConfig.builder(cluster.bootstrap()).clock(clock)
                     .channelFactory(cluster::channel).token(token).fetchMaxWaitMs(20)
                     .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).build())) {
            admin.listTopics(false);
            producer.send(new ProducerRecord("t", 1, null, "v".getBytes(StandardCharsets.UTF_8)))
                    .get(5, TimeUnit.SECONDS);
            consumer.assign(List.of(new TopicPartition("t", 1)));
            for (int i = 0; i < 50 && consumer.poll(Duration.ofMillis(100)).isEmpty(); i++) {
                // polls until the record comes
            }
        }
        Set<String> methods = cluster.calls.stream().map(call -> call.substring(0, call.indexOf('@')))
                .collect(Collectors.toSet());
        assertTrue(methods.containsAll(List.of("ListTopics", "Metadata", "FetchMany")), methods.toString());
        assertTrue(methods.stream().anyMatch(m -> m.startsWith("Produce")), methods.toString());
        List<String> authorizations = List.copyOf(cluster.authorizations);
        assertFalse(authorizations.isEmpty());
        assertEquals(List.of("Bearer " + TOKEN), authorizations.stream().distinct().toList());
    }

    @Test
    void aTokenWithTheDefaultPlainTextChannelsIsRefusedAtBuild() {
        List<Runnable> builds = List.of(
                () -> AdminConfig.builder("b:9400").token(token).build(),
                () -> ProducerConfig.builder("b:9400").token(token).build(),
                () -> ConsumerConfig.builder("b:9400").token(token).build());
        for (Runnable build : builds) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, build::run);
            assertEquals(REFUSED, e.getMessage());
        }
    }

    @Test
    void aCallOnAPlainTextChannelFailsWithoutSendingTheToken() throws Exception {
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(new FakeAdminService(cluster, 1)).intercept(cluster.recordingAuthorization()).build()
                .start();
        String address = "127.0.0.1:" + server.getPort();
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(address).channelFactory(a ->
                NettyChannelBuilder.forTarget(a).usePlaintext().build()).token(token).requestTimeoutMs(5_000)
                .build())) {
            TidemarkException e = assertThrows(TidemarkException.class, () -> admin.listTopics(false));
            assertEquals(ErrorCode.AUTHENTICATION_FAILED, e.code());
            assertEquals("gRPC UNAUTHENTICATED: a token is sent only over TLS; set tls.ca.file (the channel to "
                    + address + " is plain text)", e.getMessage());
        } finally {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        assertEquals(List.of(), cluster.authorizations, "no call reached the broker");
    }
}
