package io.tidemark.cli;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.junit.jupiter.api.Assertions.assertEquals;

class PipelinePerfCommandTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        return TidemarkCommand.commandLine(new PrintWriter(out, true), new PrintWriter(err, true)).execute(args);
    }

    /** {@code perf pipeline} against a port nothing listens on, so only a refusal before any call passes. */
    private String refusal(String... args) {
        err.getBuffer().setLength(0);
        String[] all = new String[args.length + 4];
        System.arraycopy(new String[] {"perf", "pipeline", "--bootstrap", "127.0.0.1:1"}, 0, all, 0, 4);
        System.arraycopy(args, 0, all, 4, args.length);
        assertEquals(1, run(all), err.toString());
        return err.toString().strip();
    }

    @Test
    void argumentsAreCheckedBeforeAnyCall() {
        String ranges = "error: --rate must be from 1 to 1000000 records/s, --duration from 1ms to 24h, --warmup at "
                + "least 0 and shorter than --duration, --record-size at least 0";
        assertEquals(ranges, refusal("--input", "in", "--output", "out", "--rate", "0", "--duration", "10s",
                "--record-size", "100"));
        assertEquals(ranges, refusal("--input", "in", "--output", "out", "--rate", "100", "--duration", "5s",
                "--record-size", "100"), "the default --warmup 5s leaves nothing to measure");
        assertEquals(ranges, refusal("--input", "in", "--output", "out", "--rate", "100", "--duration", "25h",
                "--record-size", "100", "--warmup", "0s"));
        assertEquals(ranges, refusal("--input", "in", "--output", "out", "--rate", "100", "--duration", "10s",
                "--record-size", "-1"));
        assertEquals("error: --rate 1000000 for --duration 120000 ms is 120000000 records; a run sends 1 to "
                + "100000000", refusal("--input", "in", "--output", "out", "--rate", "1000000", "--duration", "2m",
                "--record-size", "100"));
        assertEquals("error: --input and --output are both t: the pipeline would read its own copies",
                refusal("--input", "t", "--output", "t", "--rate", "100", "--duration", "10s", "--record-size", "1"));
        assertEquals("error: --commit-interval 'often' is not a duration: give a number with ms, s, m, h or d "
                + "(500ms, 10s, 5m, 30d) or ISO-8601 (PT10S)", refusal("--input", "in", "--output", "out", "--rate",
                "100", "--duration", "10s", "--record-size", "1", "--commit-interval", "often"));
        assertEquals(2, run("perf", "pipeline", "--input", "in", "--rate", "100", "--duration", "10s",
                "--record-size", "1"), "--output is required");
    }
}
