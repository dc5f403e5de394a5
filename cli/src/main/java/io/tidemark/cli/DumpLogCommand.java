package io.tidemark.cli;

import com.google.gson.Gson;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.core.log.index.MappedIndex;
import io.tidemark.core.log.index.IndexFile;
import io.tidemark.core.log.index.OffsetIndex;
import io.tidemark.core.log.index.TimeIndex;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchReader;
import io.tidemark.proto.record.RecordBatchValidator;
import io.tidemark.proto.record.TransactionMarker;
import io.tidemark.proto.record.RecordBatchValidator.SendTimeWindow;
import io.tidemark.core.log.segment.LogSegment;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import static io.tidemark.proto.record.RecordBatchFormat.*;

/**
 * {@code tidemark dump-log FILE...}: prints a segment's batches (and with {@code --records} its records) or an
 * index's entries, like Kafka's kafka-dump-log, so the seed-001 experiment can be done by hand. Reads the
 * files only; each batch is checked and its problem printed instead of stopping.
 */
@Command(name = "dump-log", mixinStandardHelpOptions = true,
        description = "Print the batches of a segment (.log) or the entries of an index (.index, .timeindex, "
                + ".sendindex).")
final class DumpLogCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(arity = "1..*", paramLabel = "FILE", description = "Segment or index files, named by base offset.")
    List<Path> files;

    @Option(names = "--records", description = "Also print every record of a .log file.")
    boolean records;

    @Option(names = "--output", defaultValue = "text", description = "text or json (one object per line).")
    OutputFormat output;

    private final Gson gson = new Gson();

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        for (Path file : files) {
            if (!Files.isRegularFile(file)) {
                throw new IllegalArgumentException("no such file: " + file);
            }
            String name = file.getFileName().toString();
            if (!name.matches("\\d{20}\\.(log|index|timeindex|sendindex)")) {
                throw new IllegalArgumentException("cannot dump " + file + ": expected a file named by a 20-digit "
                        + "base offset with suffix .log, .index, .timeindex or .sendindex");
            }
            long base = Long.parseLong(name.substring(0, 20));
            if (output == OutputFormat.text) {
                out.println("Dumping " + file);
            }
            if (name.endsWith(LogSegment.LOG_SUFFIX)) {
                dumpLog(file, out);
            } else if (name.endsWith(OffsetIndex.SUFFIX)) {
                try (OffsetIndex index = OffsetIndex.map(IndexFile.open(file, base, OffsetIndex.ENTRY_SIZE))) {
                    dumpIndex(index, slot -> entry("offset", index.offsetAt(slot), "position", index.positionAt(slot)),
                            out);
                }
            } else {
                try (TimeIndex index = TimeIndex.map(IndexFile.open(file, base, TimeIndex.ENTRY_SIZE))) {
                    dumpIndex(index, slot -> entry("time", index.timeAt(slot), "offset", index.offsetAt(slot)), out);
                }
            }
        }
        return 0;
    }

    private interface EntryPrinter {
        Map<String, Object> entry(int slot);
    }

    private static Map<String, Object> entry(String k1, Object v1, String k2, Object v2) {
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put(k1, v1);
        entry.put(k2, v2);
        return entry;
    }

    /** Prints entries in order; a live index is preallocated, so it stops where the offsets stop increasing. */
    private void dumpIndex(MappedIndex index, EntryPrinter printer, PrintWriter out) {
        int slot = 0;
        while (slot < index.entries() && (slot == 0 || index.offsetAt(slot) > index.offsetAt(slot - 1))) {
            print(printer.entry(slot), out);
            slot++;
        }
        if (slot < index.entries() && output == OutputFormat.text) {
            out.println("(" + (index.entries() - slot) + " more slots are preallocated space or damage)");
        }
    }

    private void dumpLog(Path file, PrintWriter out) throws IOException {
        RecordBatchValidator validator = new RecordBatchValidator();
        RecordBatchReader reader = new RecordBatchReader();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = channel.size();
            long position = 0;
            while (position < size) {
                ByteBuffer header = ByteBuffer.allocate(LOG_OVERHEAD_BYTES);
                channel.read(header, position);
                int batchSize = header.position() < LOG_OVERHEAD_BYTES ? -1 : totalSize(header, 0);
                if (batchSize < HEADER_SIZE_BYTES || batchSize > size - position) {
                    out.println("torn or corrupt data at position " + position + ": " + (size - position)
                            + " bytes that hold no whole batch");
                    return;
                }
                ByteBuffer batch = ByteBuffer.allocate(batchSize);
                channel.read(batch, position);
                batch.flip();
                print(batchFields(batch, position, validator), out);
                if (records && !control(batch, 0)) {
                    for (Record record : reader.records(batch)) {
                        print(recordFields(record), out);
                    }
                }
                position += batchSize;
            }
        }
    }

    private static Map<String, Object> batchFields(ByteBuffer batch, long position, RecordBatchValidator validator) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("baseOffset", baseOffset(batch, 0));
        fields.put("lastOffset", lastOffset(batch, 0));
        fields.put("count", recordCount(batch, 0));
        fields.put("position", position);
        fields.put("size", batch.limit());
        fields.put("receiveTime", receiveTime(batch, 0));
        fields.put("firstSendTime", firstSendTime(batch, 0));
        fields.put("maxSendTime", maxSendTime(batch, 0));
        fields.put("producerId", producerId(batch, 0));
        fields.put("producerEpoch", producerEpoch(batch, 0));
        fields.put("baseSequence", baseSequence(batch, 0));
        fields.put("transactional", transactional(batch, 0));
        fields.put("crc", Integer.toUnsignedLong(storedCrc(batch, 0)));
        try {
            validator.validate(batch, 0, batch.limit(), SendTimeWindow.UNBOUNDED);
            fields.put("valid", true);
            if (control(batch, 0)) {
                fields.put("marker", TransactionMarker.commits(batch, 0) ? "COMMIT" : "ABORT");
                fields.put("coordinatorEpoch", TransactionMarker.coordinatorEpoch(batch, 0));
            }
        } catch (TidemarkException e) {
            fields.put("valid", false);
            fields.put("problem", e.getMessage());
        }
        return fields;
    }

    private static Map<String, Object> recordFields(Record record) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("offset", record.offset());
        fields.put("sendTime", record.sendTimeMs());
        fields.put("receiveTime", record.receiveTimeMs());
        fields.put("key", record.key() == null ? null : new String(record.key(), StandardCharsets.UTF_8));
        fields.put("value", record.value() == null ? null : new String(record.value(), StandardCharsets.UTF_8));
        fields.put("headers", JsonLines.headers(record.headers()));
        return fields;
    }

    private void print(Map<String, Object> fields, PrintWriter out) {
        if (output == OutputFormat.json) {
            out.println(gson.toJson(fields));
            return;
        }
        StringBuilder line = new StringBuilder(fields.containsKey("count") || !fields.containsKey("sendTime")
                ? "" : "| ");
        fields.forEach((k, v) -> line.append(k).append(": ").append(v).append(' '));
        out.println(line.toString().trim());
    }
}
