package io.tidemark.cli;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.junit.jupiter.api.Assertions.assertEquals;

class EndToEndPerfCommandTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    /** {@code perf end-to-end} against a port nothing listens on, so only a refusal before any call passes. */
    private String refusal(String... args) {
        err.getBuffer().setLength(0);
        String[] all = new String[args.length + 6];
        System.arraycopy(new String[] {"perf", "end-to-end", "--bootstrap", "127.0.0.1:1", "--topic", "t"}, 0, all,
                0, 6);
        System.arraycopy(args, 0, all, 6, args.length);
        assertEquals(1, TidemarkCommand.commandLine(new PrintWriter(out, true), new PrintWriter(err, true))
                .execute(all), err.toString());
        return err.toString().strip();
    }

    @Test
    void argumentsAreCheckedBeforeAnyCall() {
        String ranges = "error: --rate must be from 1 to 1000000 records/s, --duration from 1ms to 24h, --warmup at "
                + "least 0 and shorter than --duration, --record-size at least 0";
        assertEquals(ranges, refusal("--rate", "0", "--duration", "10s", "--record-size", "100"));
        assertEquals(ranges, refusal("--rate", "100", "--duration", "5s", "--record-size", "100"),
                "the default --warmup 5s leaves nothing to measure");
        assertEquals(ranges, refusal("--rate", "100", "--duration", "10s", "--record-size", "-1"));
        assertEquals("error: --fetch-max-wait 'long' is not a duration: give a number with ms, s, m, h or d "
                + "(500ms, 10s, 5m, 30d) or ISO-8601 (PT10S)", refusal("--rate", "100", "--duration", "10s",
                "--record-size", "1", "--fetch-max-wait", "long"));
        assertEquals("error: linger.ms = -1 is not allowed; it must be in 0..2147483647 ms", refusal("--rate", "100", "--duration",
                "10s", "--record-size", "1", "--linger-ms", "-1"));
    }
}
