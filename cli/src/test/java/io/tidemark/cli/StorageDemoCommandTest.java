package io.tidemark.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

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
    void dumpLogRefusesUnknownFiles() {
        assertEquals(1, run(new DumpLogCommand(), dir.resolve("missing.log").toString()));
        assertEquals("error: no such file: " + dir.resolve("missing.log") + "\n", err.toString());
    }
}
