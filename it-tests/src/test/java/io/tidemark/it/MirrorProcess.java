package io.tidemark.it;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A {@code tidemark mirror} process, its output in {@code NAME.out} and {@code NAME.err} under the test's directory.
 * It is started with short intervals (checkpoints every 500 ms, heartbeats every 200 ms, topics listed every 500 ms)
 * so tests see them soon. {@link #kill()} is a SIGKILL (a crash), {@link #close()} a SIGTERM.
 */
final class MirrorProcess implements Closeable {
    private final Process process;
    private final Path err;

    private MirrorProcess(Process process, Path err) {
        this.process = process;
        this.err = err;
    }

    /** A mirror told the target's name, as a target without a cluster.name needs. */
    static MirrorProcess start(Path logDir, String name, String source, String sourceName, String target,
                               String targetName, String... extraArgs) throws IOException {
        List<String> args = new ArrayList<>(List.of("--target-name", targetName));
        args.addAll(List.of(extraArgs));
        return startTakingTargetName(logDir, name, source, sourceName, target, args.toArray(String[]::new));
    }

    /** A mirror that takes the target's name from the target (its cluster.name). */
    static MirrorProcess startTakingTargetName(Path logDir, String name, String source, String sourceName,
                                               String target, String... extraArgs) throws IOException {
        List<String> args = new ArrayList<>(List.of("mirror", "--source", source, "--source-name", sourceName,
                "--target", target, "--checkpoint-interval-ms", "500", "--heartbeat-interval-ms", "200",
                "--discovery-interval-ms", "500"));
        args.addAll(List.of(extraArgs));
        Path out = logDir.resolve(name + ".out");
        Path err = logDir.resolve(name + ".err");
        Process process = new ProcessBuilder(Tidemark.command(args.toArray(String[]::new)))
                .redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile()))
                .redirectError(ProcessBuilder.Redirect.appendTo(err.toFile())).start();
        long before = Files.exists(out) ? Files.readString(out).lines().filter(l -> l.contains("running")).count() : 0;
        await().atMost(Duration.ofSeconds(60)).until(() -> !process.isAlive()
                || Files.readString(out).lines().filter(l -> l.contains("running")).count() > before);
        if (!process.isAlive()) {
            throw new IllegalStateException("mirror " + name + " exited with " + process.exitValue() + ": "
                    + Files.readString(err));
        }
        return new MirrorProcess(process, err);
    }

    /** Waits up to 60 s for the mirror to stop on its own; its exit code. */
    int awaitExit() throws InterruptedException {
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the mirror stopped on its own within 60 s");
        return process.exitValue();
    }

    /** Its errors on stderr ({@link #errorLines}). */
    List<String> errors() throws IOException {
        return errorLines(Files.readString(err));
    }

    /** The lines of a mirror's stderr that begin with "error: ": the command's errors (log lines are the rest). */
    static List<String> errorLines(String stderr) {
        return stderr.lines().filter(line -> line.startsWith("error: ")).toList();
    }

    /** SIGKILL: the mirror dies without closing anything. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** SIGTERM, then waits for the clean stop. */
    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
