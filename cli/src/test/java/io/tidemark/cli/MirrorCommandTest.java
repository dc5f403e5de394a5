package io.tidemark.cli;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The mirror's options are still required, yet {@code mirror status} runs without them. */
class MirrorCommandTest {
    private record Run(int exitCode, String out, String err) {
    }

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exitCode = TidemarkCommand.commandLine(new PrintWriter(out), new PrintWriter(err)).execute(args);
        return new Run(exitCode, out.toString(), err.toString());
    }

    @Test
    void theMirrorsOwnOptionsAreRequiredAsAUsageError() {
        Run missing = run("mirror", "--target", "127.0.0.1:1");
        assertEquals(2, missing.exitCode());
        assertTrue(missing.err().startsWith("Missing required options: '--source', '--source-name'\n"),
                missing.err());
    }

    @Test
    void statusNeedsOnlyTheTarget() {
        Run missing = run("mirror", "status");
        assertEquals(2, missing.exitCode());
        assertTrue(missing.err().startsWith("Missing required option: '--target=HOST:PORT[,...]'\n"), missing.err());
        Run help = run("mirror", "status", "--help");
        assertEquals(0, help.exitCode());
        assertTrue(help.out().startsWith("Usage: tidemark mirror status [-hV] [--output=<output>]"), help.out());
    }
}
