package io.tidemark.it;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.OffsetAndMetadata;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.v1.BrokerServiceGrpc;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.v1.ProduceManyRequest;
import io.tidemark.proto.v1.ProduceManyResponse;
import io.tidemark.proto.v1.ProduceRequest;
import io.tidemark.proto.v1.ProduceResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One real broker process on 127.0.0.1, driven through the {@code tidemark} command as a user would: the seed-001
 * experiment, SendTime validation, restart after a crash, and bad input.
 */
class SingleBrokerIT {
    private static final long BASE_MS = 1_700_000_000_000L;

    @TempDir
    Path dir;
    private BrokerProcess broker;

    @BeforeEach
    void startBroker() throws Exception {
        broker = BrokerProcess.start(dir.resolve("data"), dir);
    }

    @AfterEach
    void stopBroker() throws Exception {
        broker.stop();
    }

    private Tidemark.Result tidemark(String stdin, String... args) throws Exception {
        return Tidemark.runWithInput(dir, stdin, args);
    }

    private Tidemark.Result ok(String stdin, String... args) throws Exception {
        Tidemark.Result result = tidemark(stdin, args);
        assertEquals(0, result.exitCode(), String.join(" ", args) + "\n" + result.out() + result.err());
        return result;
    }

    private static String seed001Input() {
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 300; i++) {
            lines.append("{\"key\":\"k").append(i).append("\",\"value\":\"record ").append(i)
                    .append("\",\"sendTime\":").append(BASE_MS + i * 1000L).append("}\n");
        }
        return lines.toString();
    }

    @Test
    void seed001ExperimentThroughTheCommand() throws Exception {
        String b = broker.bootstrap();
        ok("", "topics", "create", "--bootstrap", b, "--topic", "seed", "--partitions", "1",
                "--config", "index.interval.bytes=200", "--config", "send.time.before.max.ms=-1");
        Tidemark.Result produced = ok(seed001Input(), "produce", "--bootstrap", b, "--topic", "seed",
                "--partition", "0", "--input", "json", "--sync");
        assertTrue(produced.out().contains("300 records sent, 0 errors"), produced.out());

        assertEquals("seed:0:0\n", ok("", "offsets", "--bootstrap", b, "--topic", "seed", "--send-time",
                Long.toString(BASE_MS)).out());
        assertEquals("seed:0:150\n", ok("", "offsets", "--bootstrap", b, "--topic", "seed", "--send-time",
                Long.toString(BASE_MS + 150_000)).out());
        assertEquals("seed:0:151\n", ok("", "offsets", "--bootstrap", b, "--topic", "seed", "--send-time",
                Instant.ofEpochMilli(BASE_MS + 150_500).toString()).out());
        assertEquals("seed:0:none (log end offset 300)\n", ok("", "offsets", "--bootstrap", b, "--topic", "seed",
                "--send-time", Long.toString(BASE_MS + 300_000)).out());
        assertEquals("{\"topic\":\"seed\",\"partition\":0,\"found\":false,\"offset\":300,\"logEndOffset\":300}\n",
                ok("", "offsets", "--bootstrap", b, "--topic", "seed", "--send-time", Long.toString(BASE_MS + 300_000),
                        "--output", "json").out());

        Tidemark.Result consumed = ok("", "consume", "--bootstrap", b, "--topic", "seed", "--from",
                "send-time:" + (BASE_MS + 150_500), "--max-records", "2", "--output", "json");
        List<String> lines = consumed.out().lines().toList();
        assertEquals(2, lines.size(), consumed.out());
        assertTrue(lines.get(0).startsWith("{\"topic\":\"seed\",\"partition\":0,\"offset\":151,\"key\":\"k151\","
                + "\"value\":\"record 151\",\"headers\":{},\"sendTime\":" + (BASE_MS + 151_000) + ",\"receiveTime\":"),
                lines.get(0));

        Path sendIndex = partitionDir("seed", 0).resolve("00000000000000000000.sendindex");
        List<String> entries = ok("", "dump-log", sendIndex.toString()).out().lines()
                .filter(l -> l.startsWith("time: ")).toList();
        assertEquals("time: " + (BASE_MS + 3000) + " offset: 3", entries.get(0), "an entry about every 3 records");
        assertEquals(99, entries.size(), "entries at offsets 3, 6, ... 297 in the broker's live index");
        assertEquals("time: " + (BASE_MS + 297_000) + " offset: 297", entries.get(98));
    }

    @Test
    void sendTimeThirtyMinutesAheadIsAcceptedTwoHoursAheadIsRejected() throws Exception {
        String b = broker.bootstrap();
        ok("", "topics", "create", "--bootstrap", b, "--topic", "clock", "--partitions", "1");
        long now = Instant.now().toEpochMilli();
        ok("{\"value\":\"ahead 30m\",\"sendTime\":" + (now + 30 * 60_000) + "}\n", "produce", "--bootstrap", b,
                "--topic", "clock", "--input", "json");
        Tidemark.Result rejected = tidemark("{\"value\":\"ahead 2h\",\"sendTime\":" + (now + 120 * 60_000) + "}\n"
                + "{\"value\":\"fine\"}\n", "produce", "--bootstrap", b, "--topic", "clock", "--input", "json");
        assertEquals(1, rejected.exitCode(), rejected.out() + rejected.err());
        assertTrue(rejected.err().contains("INVALID_TIMESTAMP: record 0 of the batch has SendTime " + (now + 120 * 60_000)),
                rejected.err());
        assertTrue(rejected.err().contains("+ send.time.after.max.ms 3600000"), rejected.err());
        assertTrue(rejected.out().contains("1 records sent, 1 errors"), rejected.out());
        assertEquals("clock:0:2\n", ok("", "offsets", "--bootstrap", b, "--topic", "clock", "--latest").out(),
                "the rest was sent");
    }

    /**
     * Two {@code consume --group} processes at once split the topic between them (they join the group), and with
     * {@code --commit} every record is printed by exactly one of them, whoever held its partition when.
     */
    @Test
    void consumersOfOneGroupPrintEachRecordOnce() throws Exception {
        String b = broker.bootstrap();
        ok("", "topics", "create", "--bootstrap", b, "--topic", "split", "--partitions", "4");
        for (int p = 0; p < 4; p++) {
            StringBuilder input = new StringBuilder();
            for (int i = 0; i < 50; i++) {
                input.append("p").append(p).append(" #").append(i).append('\n');
            }
            ok(input.toString(), "produce", "--bootstrap", b, "--topic", "split", "--partition", Integer.toString(p));
        }
        // the idle timeout counts from the consumer's start, so it covers joining the group: a loaded CI machine
        // took more than 5 s for that once (both processes printed nothing)
        String[] consume = {"consume", "--bootstrap", b, "--topic", "split", "--group", "g", "--commit",
                "--timeout", "10s", "--output", "json"};
        CompletableFuture<Tidemark.Result> first = CompletableFuture.supplyAsync(() -> run(consume));
        CompletableFuture<Tidemark.Result> second = CompletableFuture.supplyAsync(() -> run(consume));
        Map<String, Integer> printed = new HashMap<>();
        for (Tidemark.Result result : List.of(first.get(), second.get())) {
            assertEquals(0, result.exitCode(), result.out() + result.err());
            Matcher m = Pattern.compile("\"partition\":(\\d+),\"offset\":(\\d+)").matcher(result.out());
            while (m.find()) {
                printed.merge(m.group(1) + "@" + m.group(2), 1, Integer::sum);
            }
        }
        assertEquals(200, printed.size(), printed.toString());
        assertEquals(List.of(), printed.entrySet().stream().filter(e -> e.getValue() != 1).toList(),
                "each record printed by one process, once");
        assertEquals(List.of(0L, 0L, 0L, 0L), ok("", "groups", "describe", "--bootstrap", b, "--group", "g",
                "--output", "json").out().lines().filter(line -> line.startsWith("{\"type\":\"partition\""))
                .map(line -> {
                    Matcher lag = Pattern.compile("\"lag\":(\\d+)").matcher(line);
                    assertTrue(lag.find(), line);
                    return Long.parseLong(lag.group(1));
                }).toList(), "what each printed was committed: no lag on any partition");
    }

    /**
     * {@code groups reset-offsets} plans, and with {@code --execute} commits, exact offsets: by SendTime, by
     * ReceiveTime (the first record stamped at or after the time), shifted and absolute ones clamped into the log;
     * then {@code delete-offsets} and {@code delete} remove what the group committed.
     */
    @Test
    void resetOffsetsLandOnExactOffsetsAndDeleteRemovesThem() throws Exception {
        String b = broker.bootstrap();
        ok("", "topics", "create", "--bootstrap", b, "--topic", "reset", "--partitions", "1",
                "--config", "send.time.before.max.ms=-1");
        for (int first : new int[]{0, 5}) {
            StringBuilder input = new StringBuilder();
            for (int i = first; i < first + 5; i++) {
                input.append("{\"value\":\"r").append(i).append("\",\"sendTime\":").append(BASE_MS + i * 1000L)
                        .append("}\n");
            }
            ok(input.toString(), "produce", "--bootstrap", b, "--topic", "reset", "--partition", "0", "--input",
                    "json", "--sync");
        }
        List<Long> receiveTimes = new ArrayList<>();
        Matcher stamped = Pattern.compile("\"receiveTime\":(\\d+)").matcher(ok("", "consume", "--bootstrap", b,
                "--topic", "reset", "--partition", "0", "--from", "earliest", "--max-records", "10", "--output",
                "json").out());
        while (stamped.find()) {
            receiveTimes.add(Long.parseLong(stamped.group(1)));
        }
        assertEquals(10, receiveTimes.size());
        assertTrue(receiveTimes.get(4) < receiveTimes.get(5), "two produce runs, two ReceiveTimes: " + receiveTimes);
        String[] reset = {"groups", "reset-offsets", "--bootstrap", b, "--group", "r", "--topic", "reset:0"};
        ok("", "groups", "commit", "--bootstrap", b, "--group", "r", "--topic", "reset", "--partition", "0",
                "--offset", "2");

        Tidemark.Result dryRun = ok("", concat(reset, "--to-datetime", Long.toString(BASE_MS + 6_500), "--by",
                "send-time"));
        assertTrue(dryRun.out().contains(String.format("%-24s %9d %16s %16d%n", "reset", 0, "2", 7)), dryRun.out());
        assertTrue(dryRun.out().contains("Dry run: nothing committed"), dryRun.out());
        assertEquals(List.of(2L), committed(b, "r"), "a dry run commits nothing");
        assertEquals("{\"group\":\"r\",\"topic\":\"reset\",\"partition\":0,\"currentOffset\":2,\"newOffset\":7,"
                + "\"executed\":true}\n", ok("", concat(reset, "--to-datetime", Long.toString(BASE_MS + 6_500),
                "--by", "send-time", "--execute", "--output", "json")).out());
        assertEquals(List.of(7L), committed(b, "r"));
        ok("", concat(reset, "--to-datetime", Instant.ofEpochMilli(receiveTimes.get(5)).toString(), "--execute"));
        assertEquals(List.of(5L), committed(b, "r"), "the first record stamped at or after the second run's time");
        ok("", concat(reset, "--shift-by", "-10", "--execute"));
        assertEquals(List.of(0L), committed(b, "r"), "5 - 10, clamped to the log start");
        ok("", concat(reset, "--to-offset", "99", "--execute"));
        assertEquals(List.of(10L), committed(b, "r"), "clamped to the log end");
        Tidemark.Result badBy = tidemark("", concat(reset, "--to-datetime", "0", "--by", "arrival"));
        assertEquals(2, badBy.exitCode(), badBy.err());
        assertTrue(badBy.err().contains("--by is 'arrival'; allowed: receive-time, send-time"), badBy.err());

        assertEquals("Deleted the committed offsets of group r of 1 partition(s): reset-0\n", ok("", "groups",
                "delete-offsets", "--bootstrap", b, "--group", "r", "--topic", "reset").out());
        assertEquals(List.of(), committed(b, "r"));
        ok("", concat(reset, "--to-earliest", "--execute"));
        assertEquals("Deleted group r: the committed offsets of 1 partition(s)\n", ok("", "groups", "delete",
                "--bootstrap", b, "--group", "r").out());
        Tidemark.Result gone = tidemark("", "groups", "describe", "--bootstrap", b, "--group", "r");
        assertEquals(1, gone.exitCode(), gone.out());
        assertTrue(gone.err().contains("UNKNOWN_GROUP: group 'r' has no members and has committed no offsets"),
                gone.err());
    }

    /** The group's committed offsets, by topic and partition (read in this JVM: each CLI run costs seconds). */
    private static List<Long> committed(String bootstrap, String group) {
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(bootstrap).build())) {
            return admin.fetchOffsets(group, List.of()).values().stream().map(OffsetAndMetadata::offset).toList();
        }
    }

    private static String[] concat(String[] first, String... rest) {
        String[] all = Arrays.copyOf(first, first.length + rest.length);
        System.arraycopy(rest, 0, all, first.length, rest.length);
        return all;
    }

    private Tidemark.Result run(String... args) {
        try {
            return tidemark("", args);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void restartAfterACrashKeepsRecordsAndCommittedOffsets() throws Exception {
        String b = broker.bootstrap();
        ok("", "topics", "create", "--bootstrap", b, "--topic", "keep", "--partitions", "2");
        StringBuilder input = new StringBuilder();
        for (int i = 0; i < 100; i++) {
            input.append("line ").append(i).append('\n');
        }
        ok(input.toString(), "produce", "--bootstrap", b, "--topic", "keep", "--partition", "1");
        Tidemark.Result first = ok("", "consume", "--bootstrap", b, "--topic", "keep", "--partition", "1",
                "--group", "g", "--commit", "--max-records", "40");
        assertEquals(40, first.out().lines().count());

        broker.kill();
        broker.restart();
        b = broker.bootstrap();

        assertEquals("keep:1:100\n", ok("", "offsets", "--bootstrap", b, "--topic", "keep", "--partition", "1",
                "--latest").out());
        Tidemark.Result rest = ok("", "consume", "--bootstrap", b, "--topic", "keep", "--partition", "1",
                "--group", "g", "--max-records", "60", "--timeout", "20s");
        List<String> lines = rest.out().lines().toList();
        assertEquals(60, lines.size(), rest.out() + rest.err());
        assertEquals("line 40", lines.get(0));
        assertEquals("line 99", lines.get(59));
        assertTrue(ok("", "groups", "describe", "--bootstrap", b, "--group", "g").out().contains("keep"));
    }

    /**
     * Where the broker keeps a partition's log: in its partition group's directory, {@code
     * data/raft/GROUP/sm/partitions/TOPIC-PARTITION-TOPICID}.
     */
    private Path partitionDir(String topic, int partition) throws IOException {
        try (Stream<Path> dirs = Files.find(dir.resolve("data").resolve("raft"), 4, (path, attributes) ->
                attributes.isDirectory() && path.getParent().getFileName().toString().equals("partitions")
                        && path.getFileName().toString().startsWith(topic + "-" + partition + "-"))) {
            List<Path> found = dirs.toList();
            assertEquals(1, found.size(), "one directory of " + topic + "-" + partition + ": " + found);
            return found.get(0);
        }
    }

    @Test
    void sigtermStopsCleanly() throws Exception {
        String b = broker.bootstrap();
        ok("", "topics", "create", "--bootstrap", b, "--topic", "calm", "--partitions", "1");
        ok("a\n", "produce", "--bootstrap", b, "--topic", "calm");
        assertEquals(143, broker.stop(), "the JVM's exit code for SIGTERM, after the shutdown hook ran");
        assertTrue(broker.stderr().contains("Broker node 1 stopped; logs closed cleanly"), broker.stderr());
        assertTrue(Files.exists(partitionDir("calm", 0).resolve(".clean-shutdown")));
        broker.restart();
        assertEquals("calm:0:1\n", ok("", "offsets", "--bootstrap", broker.bootstrap(), "--topic", "calm",
                "--latest").out());
    }

    @Test
    void aListenPortInUseIsNamed() throws Exception {
        int clientPort = FreePorts.freeBasePort();
        Path second = Files.createDirectories(dir.resolve("second"));
        try (ServerSocket taken = new ServerSocket(clientPort, 1, InetAddress.getByName("127.0.0.1"))) {
            String err = assertThrows(IllegalStateException.class, () -> BrokerProcess.startListening(clientPort,
                    second.resolve("data"), second)).getMessage();
            assertTrue(err.contains("error: INVALID_CONFIG: cannot listen for clients on 127.0.0.1:" + clientPort
                    + " (--listen): "), err);
        }
    }

    @Test
    void produceManyStoresOrRefusesEachBatchOnItsOwnAndAnswersInRequestOrder() throws Exception {
        String b = broker.bootstrap();
        ok("", "topics", "create", "--bootstrap", b, "--topic", "many", "--partitions", "2");
        long now = Instant.now().toEpochMilli();
        ProduceManyRequest request = ProduceManyRequest.newBuilder()
                .addBatches(batch("many", 0, now, "a", "b"))
                .addBatches(ProduceRequest.newBuilder().setTopic("many").setPartition(1).setBatch(
                        ByteString.copyFromUtf8("garbage bytes that are not a record batch, long enough for a header")))
                .addBatches(batch("nope", 0, now, "x"))
                .addBatches(batch("many", 0, now, "c"))
                .build();
        ManagedChannel channel = NettyChannelBuilder.forTarget(b).usePlaintext().build();
        ProduceManyResponse response;
        try {
            response = BrokerServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .produceMany(request);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }

        assertEquals(4, response.getOutcomesCount());
        ProduceResponse first = response.getOutcomes(0).getStored();
        assertEquals(List.of(0L, 1L), List.of(first.getBaseOffset(), first.getLastOffset()));
        assertEquals(ErrorCode.CORRUPT_BATCH, response.getOutcomes(1).getRefused().getCode());
        assertEquals(ErrorCode.UNKNOWN_TOPIC, response.getOutcomes(2).getRefused().getCode());
        assertEquals("topic 'nope' does not exist", response.getOutcomes(2).getRefused().getMessage());
        ProduceResponse last = response.getOutcomes(3).getStored();
        assertEquals(List.of(2L, 2L), List.of(last.getBaseOffset(), last.getLastOffset()));
        assertTrue(last.getReceiveTimeMs() >= first.getReceiveTimeMs(), response.toString());
        assertEquals("a\nb\nc\n", ok("", "consume", "--bootstrap", b, "--topic", "many", "--partition", "0",
                "--from", "earliest", "--max-records", "3").out());
        assertEquals("many:0:3\nmany:1:0\n", ok("", "offsets", "--bootstrap", b, "--topic", "many", "--latest")
                .out(), "the garbage stored nothing");
    }

    private static ProduceRequest batch(String topic, int partition, long sendTimeMs, String... values) {
        RecordBatchBuilder builder = new RecordBatchBuilder();
        for (String value : values) {
            builder.append(sendTimeMs, null, value.getBytes(StandardCharsets.UTF_8));
        }
        return ProduceRequest.newBuilder().setTopic(topic).setPartition(partition)
                .setBatch(ByteString.copyFrom(builder.build())).build();
    }

    @Test
    void badInputGetsItsErrorAndLeavesTheLogIntact() throws Exception {
        String b = broker.bootstrap();
        ok("", "topics", "create", "--bootstrap", b, "--topic", "safe", "--partitions", "1",
                "--config", "max.batch.bytes=2000");
        ok("one\ntwo\n", "produce", "--bootstrap", b, "--topic", "safe");

        Tidemark.Result unknown = tidemark("x\n", "produce", "--bootstrap", b, "--topic", "nope");
        assertEquals(1, unknown.exitCode());
        assertTrue(unknown.err().contains("UNKNOWN_TOPIC: topic 'nope' does not exist"), unknown.err());

        Tidemark.Result tooLarge = tidemark("x".repeat(5000) + "\n", "produce", "--bootstrap", b, "--topic", "safe");
        assertEquals(1, tooLarge.exitCode());
        assertTrue(tooLarge.err().contains("RECORD_TOO_LARGE"), tooLarge.err());

        Tidemark.Result badConfig = tidemark("", "topics", "create", "--bootstrap", b, "--topic", "c",
                "--partitions", "1", "--config", "retention.ms=soon");
        assertEquals(1, badConfig.exitCode());
        assertTrue(badConfig.err().contains("INVALID_CONFIG: invalid value for retention.ms: 'soon' is not an integer"),
                badConfig.err());

        Tidemark.Result huge = tidemark("", "topics", "create", "--bootstrap", b, "--topic", "huge",
                "--partitions", "100000");
        assertEquals(1, huge.exitCode());
        assertTrue(huge.err().contains("INVALID_REQUEST: a topic needs 1 to 10000 partitions "
                + "(max.partitions.per.topic), not 100000"), huge.err());

        ManagedChannel channel = NettyChannelBuilder.forTarget(b).usePlaintext().build();
        try {
            StatusRuntimeException garbage = assertThrows(StatusRuntimeException.class, () ->
                    BrokerServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS).produce(
                            ProduceRequest.newBuilder().setTopic("safe").setBatch(ByteString.copyFromUtf8(
                                    "garbage bytes that are not a record batch, long enough for a header!!"))
                                    .build()));
            assertEquals(ErrorCode.CORRUPT_BATCH, GrpcErrors.fromThrowable(garbage).code());
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }

        Tidemark.Result all = ok("", "consume", "--bootstrap", b, "--topic", "safe", "--from", "earliest",
                "--max-records", "2");
        assertEquals("one\ntwo\n", all.out());
        assertEquals("safe:0:2\n", ok("", "offsets", "--bootstrap", b, "--topic", "safe", "--latest").out());

        Path config = dir.resolve("bad.properties");
        Files.writeString(config, "retention.hours=1\n");
        Tidemark.Result badBroker = tidemark("", "broker", "--data-dir", dir.resolve("other").toString(),
                "--listen", "127.0.0.1:0", "--config", config.toString());
        assertNotEquals(0, badBroker.exitCode());
        assertTrue(badBroker.err().contains("unknown key 'retention.hours' in " + config), badBroker.err());
    }
}
