package io.tidemark.cli;

import io.tidemark.proto.error.TidemarkException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.PrintWriter;

/**
 * The {@code tidemark} command. Exit codes: 0 on success, 1 on a user error (the broker's or the log's error
 * code and message go to stderr; commands throw {@link IllegalArgumentException} for their own), 2 on a usage
 * error.
 */
@Command(name = "tidemark", mixinStandardHelpOptions = true, version = "tidemark 0.1.0",
        description = "Tidemark: a replicated, multi-cluster log broker where every record carries SendTime and "
                + "ReceiveTime.",
        subcommands = {BrokerCommand.class, LocalCommand.class, StatusCommand.class, LeaderCommand.class,
                PartitionsCommand.class, TopicsCommand.class, ProduceCommand.class, ConsumeCommand.class,
                OffsetsCommand.class, GroupsCommand.class, MirrorCommand.class, FailoverCommand.class,
                PerfCommand.class, StorageDemoCommand.class, DumpLogCommand.class, ReplicasCommand.class,
                CertsCommand.class, AclsCommand.class, TokensCommand.class, QuotasCommand.class,
                CommandLine.HelpCommand.class})
public final class TidemarkCommand {
    public static final int USER_ERROR = 1;

    public static void main(String[] args) {
        System.exit(commandLine(new PrintWriter(System.out, true), new PrintWriter(System.err, true)).execute(args));
    }

    /**
     * The command line with its error handling, writing to {@code out} and {@code err}; also how tests run a command
     * in their own JVM.
     */
    public static CommandLine commandLine(PrintWriter out, PrintWriter err) {
        CommandLine commandLine = new CommandLine(new TidemarkCommand());
        commandLine.setCaseInsensitiveEnumValuesAllowed(true);
        commandLine.setOut(out);
        commandLine.setErr(err);
        commandLine.setExecutionExceptionHandler((e, cmd, parsed) -> {
            if (e instanceof TidemarkException t) {
                cmd.getErr().println("error: " + t.code() + ": " + t.getMessage());
            } else if (e instanceof IllegalArgumentException) {
                cmd.getErr().println("error: " + e.getMessage());
            } else {
                cmd.getErr().println("error: " + e);
                e.printStackTrace(cmd.getErr());
            }
            return USER_ERROR;
        });
        return commandLine;
    }
}
