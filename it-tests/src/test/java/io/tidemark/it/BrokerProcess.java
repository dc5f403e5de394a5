package io.tidemark.it;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;

/**
 * A {@code tidemark broker} process on 127.0.0.1 with a free port (or a port chosen before it starts), its output in
 * files under the test's directory. {@link #stop()} sends SIGTERM (a clean stop), {@link #kill()} SIGKILL (a crash).
 */
final class BrokerProcess implements Closeable {
    private static final Pattern LISTENING = Pattern.compile("listening on 127\\.0\\.0\\.1:(\\d+)");

    private final Path dataDir;
    private final Path out;
    private final Path err;
    private final int listenPort;
    private final List<String> extraArgs;
    private final List<String> jvmOptions;
    private Process process;
    private int port;

    private BrokerProcess(Path dataDir, Path logDir, int listenPort, List<String> jvmOptions,
                          List<String> extraArgs) {
        this.dataDir = dataDir;
        this.jvmOptions = jvmOptions;
        this.out = logDir.resolve("broker.out");
        this.err = logDir.resolve("broker.err");
        this.listenPort = listenPort;
        this.extraArgs = extraArgs;
    }

    /** A broker on the first port of a free range ({@link FreePorts}), its Raft server on the range's Raft port. */
    static BrokerProcess start(Path dataDir, Path logDir, String... extraArgs) throws IOException {
        return startListening(FreePorts.freeBasePort(), dataDir, logDir, extraArgs);
    }

    /**
     * A broker on {@code port}, e.g. one a client was pointed at before the broker was there, a port of a range
     * {@link FreePorts} found (its Raft server takes the range's Raft port, {@code port + 5}).
     */
    static BrokerProcess startListening(int port, Path dataDir, Path logDir, String... extraArgs) throws IOException {
        return startWithJvmOptions(List.of(), port, dataDir, logDir, extraArgs);
    }

    /** A broker on {@code port} (as {@link #startListening}) in a JVM started with {@code jvmOptions}. */
    static BrokerProcess startWithJvmOptions(List<String> jvmOptions, int port, Path dataDir, Path logDir,
                                             String... extraArgs) throws IOException {
        BrokerProcess broker = new BrokerProcess(dataDir, logDir, port, jvmOptions, List.of(extraArgs));
        broker.startProcess();
        return broker;
    }

    private void startProcess() throws IOException {
        List<String> args = new ArrayList<>(List.of("broker", "--node-id", "1", "--data-dir", dataDir.toString(),
                "--listen", "127.0.0.1:" + listenPort, "--raft-port", Integer.toString(listenPort + 5)));
        args.addAll(extraArgs);
        process = new ProcessBuilder(Tidemark.command(jvmOptions, args.toArray(String[]::new)))
                .redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile()))
                .redirectError(ProcessBuilder.Redirect.appendTo(err.toFile())).start();
        long before = countListening();
        await().atMost(Duration.ofSeconds(60)).until(() -> !process.isAlive() || countListening() > before);
        if (!process.isAlive()) {
            throw new IllegalStateException("broker exited with " + process.exitValue() + ": " + Files.readString(err));
        }
        Matcher m = LISTENING.matcher(Files.readString(out));
        while (m.find()) {
            port = Integer.parseInt(m.group(1));
        }
    }

    private long countListening() throws IOException {
        return Files.exists(out) ? LISTENING.matcher(Files.readString(out)).results().count() : 0;
    }

    String bootstrap() {
        return "127.0.0.1:" + port;
    }

    String stderr() throws IOException {
        return Files.readString(err);
    }

    /** SIGTERM, then waits for the clean stop. */
    int stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        return process.exitValue();
    }

    /** SIGKILL: the broker dies without closing anything. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** Starts the broker again on the same data directory (a new port, unless it was started on a chosen one). */
    void restart() throws IOException {
        startProcess();
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }
}
