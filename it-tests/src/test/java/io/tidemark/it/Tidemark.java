package io.tidemark.it;

import io.tidemark.cli.TidemarkCommand;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs the built {@code tidemark} jar as a process, the way a user runs {@code ./tidemark}; or a command in this JVM
 * ({@link #inProcess}), for commands a test runs many times, without a JVM's start each.
 */
final class Tidemark {
    /** Above the 120 s `local up` waits for a cluster, so its own diagnosis gets printed. */
    private static final long COMMAND_TIMEOUT_SECONDS = 180;
    /** Where {@code local up} takes its brokers' JVM options from: they get the tests' ({@link TestJvmOptions}). */
    private static final String LOCAL_BROKER_JAVA_OPTS = "TIDEMARK_BROKER_JAVA_OPTS";

    private Tidemark() {
    }

    record Result(int exitCode, String out, String err) {
    }

    static List<String> command(String... args) {
        return command(List.of(), args);
    }

    /** The command line of {@code tidemark ARGS} in a JVM started with {@code jvmOptions} (-Xmx, say). */
    static List<String> command(List<String> jvmOptions, String... args) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString()));
        command.addAll(TestJvmOptions.get());
        command.addAll(jvmOptions);
        command.addAll(List.of("-jar", System.getProperty("tidemark.jar")));
        command.addAll(List.of(args));
        return command;
    }

    /** Runs a command to its end (bounded), with {@code stdin} as its input. */
    static Result runWithInput(Path workDir, String stdin, String... args) throws IOException, InterruptedException {
        Path out = Files.createTempFile(workDir, "out", ".txt");
        Path err = Files.createTempFile(workDir, "err", ".txt");
        Path in = Files.createTempFile(workDir, "in", ".txt");
        Files.writeString(in, stdin, StandardCharsets.UTF_8);
        ProcessBuilder builder = new ProcessBuilder(command(args)).redirectInput(in.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile());
        builder.environment().put(LOCAL_BROKER_JAVA_OPTS, String.join(" ", TestJvmOptions.get()));
        Process process = builder.start();
        try {
            assertTrue(process.waitFor(COMMAND_TIMEOUT_SECONDS, TimeUnit.SECONDS),
                    "tidemark " + String.join(" ", args) + " finished within " + COMMAND_TIMEOUT_SECONDS + " s");
        } finally {
            process.destroyForcibly();
        }
        return new Result(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    static Result run(Path workDir, String... args) throws IOException, InterruptedException {
        return runWithInput(workDir, "", args);
    }

    /** Runs a command in this JVM, as {@code TidemarkCommand.main} would, without exiting. */
    static Result inProcess(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exitCode = TidemarkCommand.commandLine(new PrintWriter(out, true), new PrintWriter(err, true))
                .execute(args);
        return new Result(exitCode, out.toString(), err.toString());
    }
}
