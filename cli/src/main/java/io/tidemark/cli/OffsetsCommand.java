package io.tidemark.cli;

import io.tidemark.client.api.OffsetLookup;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code tidemark offsets}: the offset of the first record at or after a time (ReceiveTime or SendTime), or the
 * earliest or latest offset, per partition. Prints {@code TOPIC:PARTITION:OFFSET} like Kafka's tool, and where no
 * record is at or after the time, {@code TOPIC:PARTITION:none (log end offset N)} instead of Kafka's silence.
 */
@Command(name = "offsets", mixinStandardHelpOptions = true,
        description = "Look offsets up: earliest, latest, or the first record at or after a time.")
final class OffsetsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;
    @Mixin
    ClientOptions client;
    @Option(names = "--topic", required = true)
    String topic;
    @Option(names = "--partition", description = "Only this partition (default: all).")
    Integer partition;
    @ArgGroup(exclusive = true, multiplicity = "1")
    Which which;
    @Option(names = "--output", defaultValue = "text", description = "text or json.")
    OutputFormat output;

    static final class Which {
        @Option(names = "--earliest", required = true)
        boolean earliest;
        @Option(names = "--latest", required = true)
        boolean latest;
        @Option(names = "--receive-time", paramLabel = "TIME", required = true,
                description = "First record with ReceiveTime at or after TIME (epoch ms or ISO-8601).")
        String receiveTime;
        @Option(names = "--send-time", paramLabel = "TIME", required = true,
                description = "First record, in log order, with SendTime at or after TIME.")
        String sendTime;

        OffsetSpec spec() {
            if (earliest) {
                return OffsetSpec.earliest();
            }
            if (latest) {
                return OffsetSpec.latest();
            }
            return receiveTime != null ? OffsetSpec.receiveTime(TimeArguments.parseTime("--receive-time", receiveTime))
                    : OffsetSpec.sendTime(TimeArguments.parseTime("--send-time", sendTime));
        }

        boolean byTime() {
            return receiveTime != null || sendTime != null;
        }
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        OffsetSpec offsetSpec = which.spec();
        try (TidemarkAdmin admin = client.admin()) {
            for (TopicPartition p : client.partitions(topic, partition)) {
                print(out, p.partition(), admin.listOffsets(p, offsetSpec));
            }
        }
        return 0;
    }

    private void print(PrintWriter out, int p, OffsetLookup lookup) {
        boolean none = which.byTime() && !lookup.found();
        if (output == OutputFormat.text) {
            out.println(topic + ":" + p + ":" + (none ? "none (log end offset " + lookup.logEndOffset() + ")"
                    : Long.toString(lookup.offset())));
            return;
        }
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("topic", topic);
        fields.put("partition", p);
        fields.put("found", lookup.found());
        fields.put("offset", lookup.offset());
        if (lookup.found()) {
            fields.put("timestamp", which.sendTime != null ? lookup.sendTimeMs() : lookup.receiveTimeMs());
        }
        fields.put("logEndOffset", lookup.logEndOffset());
        JsonLines.print(out, fields);
    }
}
