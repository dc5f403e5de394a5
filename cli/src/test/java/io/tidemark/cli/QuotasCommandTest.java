package io.tidemark.cli;

import io.tidemark.proto.v1.ClientQuota;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class QuotasCommandTest {
    private static final CommandLine.Model.CommandSpec SPEC = new CommandLine(new QuotasCommand.SetQuotas())
            .getCommandSpec();

    @Test
    void aRateNotGivenIsTheDefaultAndMinusOneIsUnlimited() {
        assertEquals(ClientQuota.newBuilder().setPrincipal("User:alice").setProduceBytesPerSecond(1_048_576)
                .setFetchBytesPerSecond(-1).build(), QuotasCommand.quota(SPEC, "User:alice", 1_048_576L, -1L));
        assertEquals(ClientQuota.newBuilder().setPrincipal("User:alice").setFetchBytesPerSecond(5).build(),
                QuotasCommand.quota(SPEC, "User:alice", null, 5L));
    }

    @Test
    void badFlagsAreNamed() {
        assertEquals("--principal: 'alice' is not a principal; write TYPE:NAME, e.g. User:alice",
                assertThrows(CommandLine.ParameterException.class,
                        () -> QuotasCommand.quota(SPEC, "alice", 5L, null)).getMessage());
        assertEquals("give --produce-bytes-per-second, --fetch-bytes-per-second or both",
                assertThrows(CommandLine.ParameterException.class,
                        () -> QuotasCommand.quota(SPEC, "User:alice", null, null)).getMessage());
        assertEquals("a rate of 0 bytes a second; allowed: a positive number, or -1 for unlimited (tidemark quotas "
                + "remove gives back the defaults)", assertThrows(CommandLine.ParameterException.class,
                () -> QuotasCommand.quota(SPEC, "User:alice", 0L, null)).getMessage());
    }

    @Test
    void aListPrintsDefaultAndUnlimitedInWords() {
        StringWriter text = new StringWriter();
        QuotasCommand.print(new PrintWriter(text, true), OutputFormat.text, List.of(ClientQuota.newBuilder()
                .setPrincipal("User:alice").setProduceBytesPerSecond(100).setFetchBytesPerSecond(-1).build()));
        assertEquals(String.format("%-32s %-24s %s%n%-32s %-24s %s%n", "PRINCIPAL", "PRODUCE-BYTES/S", "FETCH-BYTES/S",
                "User:alice", "100", "unlimited"), text.toString());
        StringWriter json = new StringWriter();
        QuotasCommand.print(new PrintWriter(json, true), OutputFormat.json, List.of(ClientQuota.newBuilder()
                .setPrincipal("User:bob").setFetchBytesPerSecond(7).build()));
        assertEquals("{\"principal\":\"User:bob\",\"produceBytesPerSecond\":0,\"fetchBytesPerSecond\":7}"
                + System.lineSeparator(), json.toString());
    }
}
