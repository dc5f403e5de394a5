package io.tidemark.mirror.status;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import io.tidemark.mirror.status.MirrorStatus.SourceStatus;
import io.tidemark.proto.v1.MirrorHeartbeat;
import io.tidemark.proto.v1.MirrorPartitionState;
import io.tidemark.proto.v1.MirrorPartitionStatus;
import io.tidemark.proto.v1.MirrorStopReason;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How a {@link MirrorStatus} is printed by {@code tidemark mirror status}: as text for people, or one JSON object per
 * source cluster, one a line, for scripts. Times are UTC with milliseconds in text ({@code 2023-11-14T22:13:20.000Z})
 * and ms since the epoch in JSON; what is not known is {@code -} in text and null in JSON.
 *
 * <h2>Text</h2>
 * <pre>
 * Mirror A -&gt; B: last heartbeat TIME, last heard from the source TIME; N partitions: N copying,
 *   N resynchronising, N stopped
 * SOURCE-TOPIC  PARTITION  TARGET-TOPIC  STATE  BEHIND  LAST-COPY  LAST-ORIGIN-OFFSET  REASON
 * ...one row per partition, by source topic and partition
 * </pre>
 * The first line is one line (wrapped here). A block per source, separated by an empty line. Without a heartbeat the
 * first line reads {@code Mirror A -> B: no heartbeat on the target; ...}; a mirror that never heard from its source,
 * {@code last heard from the source never}.
 * STATE is {@code copying}, {@code resynchronising} or {@code stopped}; BEHIND the records the target does not hold
 * yet; LAST-COPY the target's ReceiveTime of the last copy the mirror process stored; REASON, for a stopped
 * partition, {@code CODE at source offset N, stopped TIME: message} ({@code CODE, stopped TIME: message} when no record
 * was refused), else {@code -}.
 *
 * <h2>JSON</h2>
 * <pre>
 * {"sourceCluster", "targetCluster" (null when unknown), "lastHeartbeat" (null when none),
 *  "lastHeardFromSource" (null when never), "partitions": [{"sourceTopic", "partition", "targetTopic",
 *  "state": "copying"|"resynchronising"|"stopped", "recordsBehind", "sourceLogEndOffset" (null when unknown),
 *  "lastCopyTime", "lastOriginOffset", "statusTime",
 *  "stopReason": null | {"sourceOffset" (null when no record was refused), "code", "message", "stoppedTime"}}]}
 * </pre>
 *
 * <p>Stateless.
 */
public final class MirrorStatusFormat {
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'")
            .withZone(ZoneOffset.UTC);
    private static final Gson GSON = new GsonBuilder().serializeNulls().disableHtmlEscaping().create();
    private static final String ROW = "%-24s %9s %-24s %-15s %12s %-24s %18s  %s%n";
    private static final String NONE = "-";

    private MirrorStatusFormat() {
    }

    public static String text(MirrorStatus status) {
        List<String> blocks = new ArrayList<>();
        for (SourceStatus source : status.sources()) {
            StringBuilder text = new StringBuilder();
            text.append("Mirror ").append(source.sourceCluster()).append(" -> ")
                    .append(source.targetCluster().orElse("the target")).append(": ").append(heartbeatText(source))
                    .append("; ").append(countsText(source.partitions())).append('\n');
            text.append(String.format(Locale.ROOT, ROW, "SOURCE-TOPIC", "PARTITION", "TARGET-TOPIC", "STATE",
                    "BEHIND", "LAST-COPY", "LAST-ORIGIN-OFFSET", "REASON"));
            for (MirrorPartitionStatus p : source.partitions()) {
                text.append(String.format(Locale.ROOT, ROW, p.getSourceTopic(), p.getPartition(), p.getTargetTopic(),
                        state(p.getState()), p.getRecordsBehind(), p.getLastCopyReceiveTimeMs() == 0 ? NONE
                                : time(p.getLastCopyReceiveTimeMs()),
                        p.getLastOriginOffsetKnown() ? Long.toString(p.getLastOriginOffset()) : NONE,
                        p.hasStopReason() ? reasonText(p.getStopReason()) : NONE));
            }
            blocks.add(text.toString());
        }
        return String.join("\n", blocks);
    }

    /** One JSON object per source, each on one line with its line end. */
    public static String json(MirrorStatus status) {
        StringBuilder lines = new StringBuilder();
        for (SourceStatus source : status.sources()) {
            Map<String, Object> fields = new LinkedHashMap<>();
            fields.put("sourceCluster", source.sourceCluster());
            fields.put("targetCluster", source.targetCluster().orElse(null));
            fields.put("lastHeartbeat", source.lastHeartbeat().map(MirrorHeartbeat::getMirrorTimeMs).orElse(null));
            fields.put("lastHeardFromSource", source.lastHeartbeat().map(MirrorHeartbeat::getLastHeardFromSourceMs)
                    .filter(ms -> ms > 0).orElse(null));
            List<Map<String, Object>> partitions = new ArrayList<>();
            source.partitions().forEach(p -> partitions.add(partitionJson(p)));
            fields.put("partitions", partitions);
            lines.append(GSON.toJson(fields)).append('\n');
        }
        return lines.toString();
    }

    private static String heartbeatText(SourceStatus source) {
        return source.lastHeartbeat().map(h -> "last heartbeat " + time(h.getMirrorTimeMs())
                + ", last heard from the source " + (h.getLastHeardFromSourceMs() > 0
                ? time(h.getLastHeardFromSourceMs()) : "never")).orElse("no heartbeat on the target");
    }

    private static String countsText(List<MirrorPartitionStatus> partitions) {
        Map<MirrorPartitionState, Integer> counts = new LinkedHashMap<>();
        for (MirrorPartitionState state : List.of(MirrorPartitionState.MIRROR_PARTITION_COPYING,
                MirrorPartitionState.MIRROR_PARTITION_RESYNCHRONISING, MirrorPartitionState.MIRROR_PARTITION_STOPPED)) {
            counts.put(state, 0);
        }
        partitions.forEach(p -> counts.merge(p.getState(), 1, Integer::sum));
        List<String> parts = new ArrayList<>();
        counts.forEach((state, count) -> parts.add(count + " " + state(state)));
        return partitions.size() + (partitions.size() == 1 ? " partition: " : " partitions: ")
                + String.join(", ", parts);
    }

    private static String reasonText(MirrorStopReason reason) {
        return reason.getCode() + (reason.getSourceOffsetKnown() ? " at source offset " + reason.getSourceOffset()
                : "") + ", stopped " + time(reason.getStoppedTimeMs()) + ": " + reason.getMessage();
    }

    private static Map<String, Object> partitionJson(MirrorPartitionStatus p) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("sourceTopic", p.getSourceTopic());
        fields.put("partition", p.getPartition());
        fields.put("targetTopic", p.getTargetTopic());
        fields.put("state", state(p.getState()));
        fields.put("recordsBehind", p.getRecordsBehind());
        fields.put("sourceLogEndOffset", p.getSourceLogEndOffset() < 0 ? null : p.getSourceLogEndOffset());
        fields.put("lastCopyTime", p.getLastCopyReceiveTimeMs() == 0 ? null : p.getLastCopyReceiveTimeMs());
        fields.put("lastOriginOffset", p.getLastOriginOffsetKnown() ? p.getLastOriginOffset() : null);
        fields.put("statusTime", p.getStatusTimeMs());
        Map<String, Object> reason = null;
        if (p.hasStopReason()) {
            MirrorStopReason stop = p.getStopReason();
            reason = new LinkedHashMap<>();
            reason.put("sourceOffset", stop.getSourceOffsetKnown() ? stop.getSourceOffset() : null);
            reason.put("code", stop.getCode().name());
            reason.put("message", stop.getMessage());
            reason.put("stoppedTime", stop.getStoppedTimeMs());
        }
        fields.put("stopReason", reason);
        return fields;
    }

    /** A state as printed: {@code copying}, {@code resynchronising}, {@code stopped}. */
    static String state(MirrorPartitionState state) {
        return switch (state) {
            case MIRROR_PARTITION_COPYING -> "copying";
            case MIRROR_PARTITION_RESYNCHRONISING -> "resynchronising";
            case MIRROR_PARTITION_STOPPED -> "stopped";
            default -> "unknown";
        };
    }

    private static String time(long ms) {
        return TIME.format(Instant.ofEpochMilli(ms));
    }
}
