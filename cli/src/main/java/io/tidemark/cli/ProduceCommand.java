package io.tidemark.cli;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.RecordMetadata;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.Header;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Callable;

/**
 * {@code tidemark produce}: sends stdin to a topic, one record per line. Text lines are values; JSON lines are
 * {@code {"key":..., "value":..., "sendTime": ms, "headers": {...}}}, every field optional but value. A record
 * the broker refuses prints its error and line number on stderr; the rest is still sent, and the command exits
 * with 1 at the end.
 */
@Command(name = "produce", mixinStandardHelpOptions = true, description = "Send stdin to a topic, a record per line.")
final class ProduceCommand implements Callable<Integer> {
    enum Input { text, json }

    @Spec
    CommandSpec spec;
    @Mixin
    ClientOptions client;
    @Option(names = "--topic", required = true)
    String topic;
    @Option(names = "--partition", description = "Send every record to this partition (default: by key hash, "
            + "or spread when there is no key).")
    Integer partition;
    @Option(names = "--input", defaultValue = "text", description = "text (a value per line) or json.")
    Input input;
    @Option(names = "--sync", description = "Wait for each record's acknowledgement before sending the next: one "
            + "record per batch, as in seed 001's experiment (slow).")
    boolean sync;

    private record Sent(int line, CompletableFuture<RecordMetadata> result) {
    }

    @Override
    public Integer call() throws IOException {
        PrintWriter err = spec.commandLine().getErr();
        List<Sent> sent = new ArrayList<>();
        int errors = 0;
        try (TidemarkAdmin admin = client.admin()) {
            admin.metadata(List.of(topic));
        }
        try (TidemarkProducer producer = new TidemarkProducer(client.producerConfig().build());
             BufferedReader reader = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            int lineNumber = 0;
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                lineNumber++;
                try {
                    sent.add(new Sent(lineNumber, producer.send(record(line))));
                    if (sync) {
                        producer.flush();
                    }
                } catch (IllegalArgumentException e) {
                    err.println("error: line " + lineNumber + ": " + e.getMessage());
                    errors++;
                } catch (TidemarkException e) {
                    err.println("error: line " + lineNumber + ": " + e.code() + ": " + e.getMessage());
                    errors++;
                }
            }
            producer.flush();
        }
        int acknowledged = 0;
        for (Sent s : sent) {
            try {
                s.result().join();
                acknowledged++;
            } catch (CompletionException e) {
                Throwable cause = e.getCause();
                err.println("error: line " + s.line() + ": " + (cause instanceof TidemarkException t
                        ? t.code() + ": " + t.getMessage() : cause.toString()));
                errors++;
            }
        }
        spec.commandLine().getOut().printf("%d records sent, %d errors%n", acknowledged, errors);
        return errors == 0 ? 0 : TidemarkCommand.USER_ERROR;
    }

    private ProducerRecord record(String line) {
        if (input == Input.text) {
            return new ProducerRecord(topic, partition, null, line.getBytes(StandardCharsets.UTF_8), null, List.of());
        }
        JsonObject json;
        try {
            json = JsonParser.parseString(line).getAsJsonObject();
        } catch (JsonParseException | IllegalStateException e) {
            throw new IllegalArgumentException("not a JSON object: " + line);
        }
        if (!json.has("value") || json.get("value").isJsonNull()) {
            throw new IllegalArgumentException("a JSON record needs a \"value\"; \"key\", \"sendTime\" and "
                    + "\"headers\" are optional");
        }
        List<Header> headers = new ArrayList<>();
        if (json.has("headers")) {
            for (Map.Entry<String, JsonElement> h : json.getAsJsonObject("headers").entrySet()) {
                headers.add(new Header(h.getKey(), h.getValue().getAsString().getBytes(StandardCharsets.UTF_8)));
            }
        }
        byte[] key = json.has("key") && !json.get("key").isJsonNull()
                ? json.get("key").getAsString().getBytes(StandardCharsets.UTF_8) : null;
        Long sendTime = json.has("sendTime") ? json.get("sendTime").getAsLong() : null;
        return new ProducerRecord(topic, partition, key, json.get("value").getAsString().getBytes(StandardCharsets.UTF_8),
                sendTime, headers);
    }
}
