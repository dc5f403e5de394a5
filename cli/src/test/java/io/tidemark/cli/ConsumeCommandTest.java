package io.tidemark.cli;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@code consume --mode} refuses the options that cannot go with it before it connects. */
class ConsumeCommandTest {
    private static String refusal(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exitCode = TidemarkCommand.commandLine(new PrintWriter(out, true), new PrintWriter(err, true))
                .execute(args);
        assertEquals(1, exitCode, err.toString());
        return err.toString().strip();
    }

    @Test
    void aRuntimeNeedsAGroupAndTheWholeTopic() {
        assertEquals("error: --mode needs --group: the runtime commits the group's positions",
                refusal("consume", "--bootstrap", "127.0.0.1:1", "--topic", "t", "--mode", "tracked"));
        assertEquals("error: --mode reads the group's share of the whole topic from its committed positions and "
                        + "commits by itself: --partition, --from and --commit are not allowed with it",
                refusal("consume", "--bootstrap", "127.0.0.1:1", "--topic", "t", "--group", "g", "--mode", "auto",
                        "--from", "earliest"));
    }

    @Test
    void outcomesAndRetriesNeedAMode() {
        assertEquals("error: --fail-matching, --retry-after, --max-attempts, --retry-topic, --dead-letter-topic and "
                + "--copy-to need --mode", refusal("consume", "--bootstrap", "127.0.0.1:1", "--topic", "t",
                "--max-attempts", "3"));
        assertEquals("error: --fail-matching, --retry-after, --max-attempts, --retry-topic, --dead-letter-topic and "
                + "--copy-to need --mode", refusal("consume", "--bootstrap", "127.0.0.1:1", "--topic", "t",
                "--copy-to", "out"));
        assertEquals("error: --retry-after needs --fail-matching: it says what the handler answers for the records "
                + "that match", refusal("consume", "--bootstrap", "127.0.0.1:1", "--topic", "t", "--group", "g",
                "--mode", "tracked", "--retry-after", "5s"));
    }
}
