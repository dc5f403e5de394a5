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

/**
 * A {@code tidemark mirror} process, its output in {@code NAME.out} and {@code NAME.err} under the test's directory.
 * It is started with short intervals (checkpoints every 500 ms, heartbeats every 200 ms, topics listed every 500 ms)
 * so tests see them soon. {@link #kill()} is a SIGKILL (a crash), {@link #close()} a SIGTERM.
 */
final class MirrorProcess implements Closeable {
    private final Process process;

    private MirrorProcess(Process process) {
        this.process = process;
    }

    static MirrorProcess start(Path logDir, String name, String source, String sourceName, String target,
                               String targetName, String... extraArgs) throws IOException {
        List<String> args = new ArrayList<>(List.of("mirror", "--source", source, "--source-name", sourceName,
                "--target", target, "--target-name", targetName, "--checkpoint-interval-ms", "500",
                "--heartbeat-interval-ms", "200", "--discovery-interval-ms", "500"));
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
        return new MirrorProcess(process);
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
