package io.tidemark.cli;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.core.log.SegmentInfo;
import io.tidemark.core.log.TimeLookup;
import io.tidemark.core.log.index.IndexFile;
import io.tidemark.core.log.index.OffsetIndex;
import io.tidemark.core.log.index.TimeIndex;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.core.log.segment.LogSegment;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

/**
 * {@code tidemark demo}: seed 001's experiment on a real partition log. Appends records one second apart
 * (SendTime and ReceiveTime both {@code base + i * 1000}), prints the segments and index entries, and looks
 * times up on both clocks, including a time after the last record, which Tidemark answers explicitly.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Run the storage demo: append records, print the index entries, look records up by time.")
final class StorageDemoCommand implements Callable<Integer> {
    private static final String PARTITION_DIR = "storage-demo-0";

    @Spec
    CommandSpec spec;

    @Option(names = "--data-dir", description = "Where the demo partition goes (default: ${DEFAULT-VALUE}); its "
            + PARTITION_DIR + " directory is replaced on each run.",
            defaultValue = "${sys:user.home}/.tidemark/demo")
    Path dataDir;

    @Option(names = "--records", defaultValue = "300", description = "Records to append (default: ${DEFAULT-VALUE}).")
    int records;

    @Option(names = "--index-interval-bytes", defaultValue = "200",
            description = "index.interval.bytes of the demo partition (default: ${DEFAULT-VALUE}).")
    int indexIntervalBytes;

    private final Clock clock;

    StorageDemoCommand() {
        this(Clock.systemUTC());
    }

    StorageDemoCommand(Clock clock) {
        this.clock = clock;
    }

    @Override
    public Integer call() throws IOException {
        if (records < 1) {
            throw new IllegalArgumentException("--records " + records + " is not allowed: give at least 1");
        }
        PrintWriter out = spec.commandLine().getOut();
        Path dir = dataDir.resolve(PARTITION_DIR);
        deleteDemoPartition(dir);
        long base = clock.millis() / 60_000 * 60_000;
        TopicConfig config = TopicConfig.parse(Map.of("index.interval.bytes", Integer.toString(indexIntervalBytes)));
        try (PartitionLog log = PartitionLog.open(dir, config, base)) {
            for (int i = 0; i < records; i++) {
                long time = base + i * 1000L;
                log.append(new RecordBatchBuilder().append(time, bytes("key-" + i), bytes("value-" + i)).build(), time);
            }
            out.printf("Appended %d records to %s: SendTime = ReceiveTime = %s + i seconds, index.interval.bytes=%d%n",
                    records, dir, Instant.ofEpochMilli(base), indexIntervalBytes);
            for (SegmentInfo segment : log.segments()) {
                out.printf("Segment %020d: offsets %d..%d, %d bytes, %d entries in each index%n", segment.baseOffset(),
                        segment.baseOffset(), segment.nextOffset() - 1, segment.sizeBytes(), segment.indexEntries());
            }
            printLookups(log, base, out);
        }
        printIndexEntries(dir, out);
        out.println("Dump any file: ./tidemark dump-log " + LogSegment.file(dir, 0, TimeIndex.RECEIVE_TIME_SUFFIX));
        return 0;
    }

    private void printLookups(PartitionLog log, long base, PrintWriter out) {
        long last = base + (records - 1) * 1000L;
        long[] targets = {base, base + 150_000, base + 150_500, last + 1};
        String[] labels = {"base", "base+150000", "base+150500", "after the last"};
        out.println("First record at or after a time:");
        for (int i = 0; i < targets.length; i++) {
            out.printf("  %-16s ReceiveTime -> %-28s SendTime -> %s%n", labels[i],
                    describe(log.lookupByReceiveTime(targets[i])), describe(log.lookupBySendTime(targets[i])));
        }
    }

    private static String describe(TimeLookup lookup) {
        if (lookup instanceof TimeLookup.Found found) {
            return "offset " + found.offset();
        }
        return "none (log end offset " + ((TimeLookup.NotFound) lookup).logEndOffset() + ")";
    }

    private static void printIndexEntries(Path dir, PrintWriter out) throws IOException {
        try (OffsetIndex offsets = OffsetIndex.map(IndexFile.open(LogSegment.file(dir, 0, OffsetIndex.SUFFIX), 0,
                     OffsetIndex.ENTRY_SIZE));
             TimeIndex receiveTimes = TimeIndex.map(IndexFile.open(LogSegment.file(dir, 0,
                     TimeIndex.RECEIVE_TIME_SUFFIX), 0, TimeIndex.ENTRY_SIZE));
             TimeIndex sendTimes = TimeIndex.map(IndexFile.open(LogSegment.file(dir, 0,
                     TimeIndex.SEND_TIME_SUFFIX), 0, TimeIndex.ENTRY_SIZE))) {
            out.println("Index entries of segment 0 (offset -> position | ReceiveTime -> offset | max SendTime -> offset):");
            int shown = Math.min(offsets.entries(), 5);
            for (int slot = 0; slot < offsets.entries(); slot++) {
                if (slot < shown || slot == offsets.entries() - 1) {
                    out.printf("  %6d -> %-7d | %d -> %-6d | %d -> %d%n", offsets.offsetAt(slot),
                            offsets.positionAt(slot), receiveTimes.timeAt(slot), receiveTimes.offsetAt(slot),
                            sendTimes.timeAt(slot), sendTimes.offsetAt(slot));
                } else if (slot == shown) {
                    out.printf("  ... (%d entries in all)%n", offsets.entries());
                }
            }
        }
    }

    private static void deleteDemoPartition(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        }
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
