package io.tidemark.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The README's run command, end to end: the built jar as a process, then dump-log on what it wrote. */
class StorageDemoIT {
    @TempDir
    Path dir;

    private record Result(int exitCode, String out, String err) {
    }

    private Result tidemark(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", System.getProperty("tidemark.jar")));
        command.addAll(List.of(args));
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        Process process = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        try {
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), "tidemark " + String.join(" ", args) + " finished");
        } finally {
            process.destroyForcibly();
        }
        return new Result(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    @Test
    void demoAndDumpLog() throws Exception {
        Path data = dir.resolve("data");
        Result demo = tidemark("demo", "--data-dir", data.toString());
        assertEquals(0, demo.exitCode(), demo.err());
        assertTrue(demo.out().contains("Segment 00000000000000000000: offsets 0..299, 24380 bytes, 99 entries in each index"),
                demo.out());
        assertTrue(demo.out().contains("  base+150000      ReceiveTime -> offset 150                   SendTime -> offset 150"),
                demo.out());
        assertTrue(demo.out().contains("  after the last   ReceiveTime -> none (log end offset 300)"), demo.out());

        Path index = data.resolve("storage-demo-0").resolve("00000000000000000000.index");
        Result dump = tidemark("dump-log", "--output", "json", index.toString());
        assertEquals(0, dump.exitCode(), dump.err());
        String[] lines = dump.out().split("\n");
        assertEquals(99, lines.length);
        assertEquals("{\"offset\":3,\"position\":234}", lines[0]);
        assertEquals("{\"offset\":297,\"position\":24134}", lines[98]);

        Result usage = tidemark("dump-log");
        assertEquals(2, usage.exitCode());
        assertTrue(usage.err().startsWith("Missing required parameter: 'FILE'"), usage.err());
    }
}
