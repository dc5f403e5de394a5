package io.tidemark.cli;

import io.tidemark.client.api.TidemarkConsumer;
import io.tidemark.client.api.TopicPartition;

import java.util.List;

/** Where {@code consume --from} starts: earliest, latest, offset:N, receive-time:TIME or send-time:TIME. */
record StartPosition(String kind, long value) {
    static StartPosition parse(String text) {
        if (text.equals("earliest") || text.equals("latest")) {
            return new StartPosition(text, 0);
        }
        int colon = text.indexOf(':');
        String kind = colon < 0 ? text : text.substring(0, colon);
        String argument = colon < 0 ? "" : text.substring(colon + 1);
        return switch (kind) {
            case "offset" -> {
                if (!argument.matches("\\d+")) {
                    throw new IllegalArgumentException("--from offset:N needs an offset of 0 or more, not '" + argument + "'");
                }
                yield new StartPosition(kind, Long.parseLong(argument));
            }
            case "receive-time", "send-time" -> new StartPosition(kind, TimeArguments.parseTime("--from " + kind, argument));
            default -> throw new IllegalArgumentException("--from '" + text + "' is not allowed: give earliest, latest, "
                    + "offset:N, receive-time:TIME or send-time:TIME");
        };
    }

    void seek(TidemarkConsumer consumer, List<TopicPartition> partitions) {
        switch (kind) {
            case "earliest" -> consumer.seekToBeginning(partitions);
            case "latest" -> consumer.seekToEnd(partitions);
            case "offset" -> partitions.forEach(p -> consumer.seek(p, value));
            case "receive-time" -> consumer.seekToReceiveTime(partitions, value);
            default -> consumer.seekToSendTime(partitions, value);
        }
    }
}
