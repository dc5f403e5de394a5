package io.tidemark.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.awaitility.Awaitility.await;

/**
 * The JVM options of every {@code tidemark} process the tests start (brokers, mirrors, commands, and the brokers of
 * {@code local up}): the client compiler only, and a class-data-sharing archive of the classes a broker loads. The
 * tests start some hundred JVMs that live seconds, most of whose CPU went to loading classes and to C2 compiling
 * code that never gets hot: measured here, a broker's start took 4.4 CPU seconds without them and 1.4 with them, a
 * command 2.8 and 1.1. Behaviour is the same; only how fast code runs before it warms differs, and these processes
 * carry test loads, not benchmarks.
 *
 * <p>The archive ({@code -XX:SharedArchiveFile}) is made once per build, beside the tidemark jar, by a broker started
 * with {@code -XX:ArchiveClassesAtExit} and stopped; it is made again when the jar is newer. Two test JVMs making it at
 * once take turns on a file lock. Should making it fail, the processes run without it.
 */
final class TestJvmOptions {
    private static final String CLIENT_COMPILER_ONLY = "-XX:TieredStopAtLevel=1";
    private static List<String> options;

    private TestJvmOptions() {
    }

    /** The options, making the archive first when it is missing or older than the jar. */
    static synchronized List<String> get() {
        if (options == null) {
            options = withArchive();
        }
        return options;
    }

    private static List<String> withArchive() {
        Path jar = Path.of(System.getProperty("tidemark.jar"));
        Path archive = jar.resolveSibling("tidemark-test.jsa");
        try (FileChannel lockFile = FileChannel.open(jar.resolveSibling("tidemark-test.jsa.lock"),
                StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             FileLock ignored = lockFile.lock()) {
            if (!Files.exists(archive) || olderThan(archive, jar)) {
                make(jar, archive);
            }
            return List.of(CLIENT_COMPILER_ONLY, "-XX:SharedArchiveFile=" + archive, "-Xlog:cds=off",
                    "-Xlog:cds+dynamic=off");
        } catch (IOException | RuntimeException e) {
            System.err.println("Test JVMs run without a class-data-sharing archive: " + e);
            return List.of(CLIENT_COMPILER_ONLY);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of(CLIENT_COMPILER_ONLY);
        }
    }

    private static boolean olderThan(Path file, Path other) throws IOException {
        FileTime made = Files.getLastModifiedTime(file);
        return made.compareTo(Files.getLastModifiedTime(other)) < 0;
    }

    /** Starts a broker that writes the classes it loaded into the archive when it stops, and stops it. */
    private static void make(Path jar, Path archive) throws IOException, InterruptedException {
        Path work = Files.createTempDirectory(jar.getParent(), "cds");
        Path out = work.resolve("broker.out");
        Path dumped = work.resolve("tidemark.jsa");
        int port = FreePorts.freeBasePort();
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), CLIENT_COMPILER_ONLY, "-XX:ArchiveClassesAtExit=" + dumped, "-jar", jar.toString(),
                "broker", "--data-dir", work.resolve("data").toString(), "--listen", "127.0.0.1:" + port,
                "--raft-port", Integer.toString(port + 5)));
        try {
            Process broker = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile())
                    .start();
            try {
                await().atMost(Duration.ofSeconds(60)).until(() -> !broker.isAlive()
                        || Files.readString(out).contains("listening on"));
            } finally {
                broker.destroy();
                if (!broker.waitFor(60, TimeUnit.SECONDS)) {
                    broker.destroyForcibly();
                }
            }
            if (!Files.exists(dumped)) {
                throw new UncheckedIOException(new IOException("the broker wrote no archive: "
                        + Files.readString(out)));
            }
            Files.move(dumped, archive, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            try (Stream<Path> files = Files.walk(work)) {
                files.sorted(Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
            }
        }
    }
}
