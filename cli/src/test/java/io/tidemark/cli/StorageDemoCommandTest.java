package io.tidemark.cli;

import io.tidemark.proto.record.Header;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.ProvenanceHeaders;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.TransactionMarker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;
import java.util.zip.CRC32C;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StorageDemoCommandTest {
    @TempDir
    Path dir;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(Object command, String... args) {
        CommandLine commandLine = TidemarkCommand.commandLine(new PrintWriter(out, true), new PrintWriter(err, true));
        CommandLine sub = new CommandLine(command);
        sub.setOut(commandLine.getOut());
        sub.setErr(commandLine.getErr());
        sub.setExecutionExceptionHandler(commandLine.getExecutionExceptionHandler());
        return sub.execute(args);
    }

    @Test
    void demoPrintsTheSeed001Answers() {
        Clock clock = Clock.fixed(Instant.parse("2026-11-30T10:15:30Z"), ZoneOffset.UTC);
        assertEquals(0, run(new StorageDemoCommand(clock), "--data-dir", dir.toString()), err.toString());
        String text = out.toString();
        assertTrue(text.contains("SendTime = ReceiveTime = 2026-11-30T10:15:00Z + i seconds"), text);
        assertTrue(text.contains("Segment 00000000000000000000: offsets 0..299, 24380 bytes, 99 entries in each index"), text);
        assertTrue(text.contains("  base+150500      ReceiveTime -> offset 151                   SendTime -> offset 151"), text);
        assertTrue(text.contains("  after the last   ReceiveTime -> none (log end offset 300)    SendTime -> none (log end offset 300)"), text);
        assertTrue(text.contains("       3 -> 234     | 1796033703000 -> 3      | 1796033703000 -> 3"), text);
    }

    @Test
    void dumpLogPrintsIndexEntriesAndRecords() {
        Clock clock = Clock.fixed(Instant.ofEpochMilli(1_700_000_000_000L), ZoneOffset.UTC);
        run(new StorageDemoCommand(clock), "--data-dir", dir.toString(), "--records", "7");
        out.getBuffer().setLength(0);
        Path partition = dir.resolve("storage-demo-0");
        assertEquals(0, run(new DumpLogCommand(), partition.resolve("00000000000000000000.sendindex").toString()));
        assertEquals("Dumping " + partition.resolve("00000000000000000000.sendindex") + "\n"
                + "time: 1699999983000 offset: 3\ntime: 1699999986000 offset: 6\n", out.toString());
        out.getBuffer().setLength(0);
        assertEquals(0, run(new DumpLogCommand(), "--records", "--output", "json",
                partition.resolve("00000000000000000000.log").toString()));
        String firstRecord = out.toString().split("\n")[1];
        assertEquals("{\"offset\":0,\"sendTime\":1699999980000,\"receiveTime\":1699999980000,\"key\":\"key-0\","
                + "\"value\":\"value-0\",\"headers\":{}}", firstRecord);
    }

    @Test
    void dumpLogPrintsTheProvenanceOfACopyAsItsFields() throws Exception {
        ByteBuffer batch = new RecordBatchBuilder().mirrored().append(1_700_000_000_000L, null, "v".getBytes(UTF_8),
                ProvenanceHeaders.forCopy(List.of(new Header("h", "x".getBytes(UTF_8))),
                        new OriginPartition("A", "orders", UUID.fromString("0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95"), 0),
                        41, 1_700_000_000_001L)).build();
        RecordBatchFormat.stamp(new CRC32C(), batch, 0, 0, 1_700_000_000_002L);
        Path log = Files.write(dir.resolve("00000000000000000000.log"), batch.array());
        assertEquals(0, run(new DumpLogCommand(), "--records", "--output", "json", log.toString()));
        assertEquals("{\"offset\":0,\"sendTime\":1700000000000,\"receiveTime\":1700000000002,\"value\":\"v\","
                + "\"headers\":{\"h\":\"x\",\"tidemark.origin\":{\"cluster\":\"A\",\"topic\":\"orders\","
                + "\"topicId\":\"0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95\",\"partition\":0,\"offset\":41,\"receiveTime\":1700000000001,\"path\":[\"A\"]}}}",
                out.toString().split("\n")[1]);
        out.getBuffer().setLength(0);
        assertEquals(0, run(new DumpLogCommand(), "--records", log.toString()));
        assertEquals("| offset: 0 sendTime: 1700000000000 receiveTime: 1700000000002 key: null value: v headers: {h=x, "
                + "tidemark.origin={cluster=A, topic=orders, topicId=0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95, partition=0, "
                + "offset=41, receiveTime=1700000000001, path=[A]}}", out.toString().split("\n")[2]);
    }

    @Test
    void dumpLogShowsTransactionMarkersAsBatchesWithoutRecords() throws Exception {
        ByteBuffer data = new RecordBatchBuilder().producer(7, (short) 1, 0).transactional()
                .append(1_700_000_000_000L, null, "v".getBytes(UTF_8)).build();
        RecordBatchFormat.stamp(new CRC32C(), data, 0, 0, 1_700_000_000_002L);
        ByteBuffer abort = TransactionMarker.build(7, (short) 1, false, 4, 1_700_000_000_003L);
        RecordBatchFormat.stamp(new CRC32C(), abort, 0, 1, 1_700_000_000_003L);
        Path log = Files.write(dir.resolve("00000000000000000000.log"),
                ByteBuffer.allocate(data.limit() + abort.limit()).put(data).put(abort).array());
        assertEquals(0, run(new DumpLogCommand(), "--records", "--output", "json", log.toString()));
        String[] lines = out.toString().split("\n");
        assertEquals(3, lines.length, out.toString());
        assertTrue(lines[0].contains("\"producerId\":7,\"producerEpoch\":1,\"baseSequence\":0,"
                + "\"transactional\":true,"), lines[0]);
        assertEquals("{\"offset\":0,\"sendTime\":1700000000000,\"receiveTime\":1700000000002,\"value\":\"v\","
                + "\"headers\":{}}", lines[1]);
        assertTrue(lines[2].startsWith("{\"baseOffset\":1,\"lastOffset\":1,\"count\":1,"), lines[2]);
        assertTrue(lines[2].endsWith("\"transactional\":true,\"crc\":" + Integer.toUnsignedLong(
                RecordBatchFormat.storedCrc(abort, 0)) + ",\"valid\":true,\"marker\":\"ABORT\","
                + "\"coordinatorEpoch\":4}"), lines[2]);
    }

    @Test
    void dumpLogRefusesUnknownFiles() {
        assertEquals(1, run(new DumpLogCommand(), dir.resolve("missing.log").toString()));
        assertEquals("error: no such file: " + dir.resolve("missing.log") + "\n", err.toString());
    }
}
