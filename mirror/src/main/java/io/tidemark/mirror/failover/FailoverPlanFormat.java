package io.tidemark.mirror.failover;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.failover.FailoverPlan.ByTime;
import io.tidemark.mirror.failover.FailoverPlan.Exact;
import io.tidemark.mirror.failover.FailoverPlan.PartitionPlan;
import io.tidemark.mirror.failover.FailoverPlan.Uncommitted;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.stream.Collectors;

/**
 * How a {@link FailoverPlan} is printed: as text for people, or as one JSON object on one line for scripts.
 * Times are UTC with milliseconds in text ({@code 2023-11-14T22:13:20.000Z}) and ms since the epoch in JSON;
 * durations are seconds with milliseconds in text and ms in JSON.
 *
 * <h2>Text</h2>
 * <pre>
 * Failover of group G from cluster A to cluster B, planned at TIME
 * Source A: the mirror last heard from it at TIME (last heartbeat TIME); N records not copied, lost with it
 * Buffer X: S s (auto) = S s the target's clock ran behind the source's + S s spread of the mirror's latency
 *   (S s to S s over N records in N heartbeats, TIME to TIME)
 * TOPIC  PARTITION  MODE  OFFSET  LOG-END  RECEIVE-TIME  SEND-TIME  RE-READ  SKIPPED  LOST  BASIS
 * ...one row per partition
 * Group G: re-reads ~N, skipped N (apply skips them only with --allow-skip), lost N (N not copied, N removed by
 *   retention)
 * Members of group G on the target: none
 * </pre>
 * The last line lists the live members instead when there are any, {@code ID (client C, host H, assigned T-P,...)}
 * separated by {@code ; }, and adds {@code  (apply is refused while there are any)}.
 * The buffer line (one line; wrapped here) is there only when a partition resumes by time; a given buffer reads
 * {@code Buffer X: S s (--buffer)}. Without a heartbeat the source line reads {@code Source A: no heartbeat on the
 * target, records not copied unknown}; its N counts every partition the mirror copied, the last line the group's.
 * A row: MODE {@code exact}, {@code time} or {@code none} (not committed: the group's reset policy applies; OFFSET
 * and RE-READ are {@code -}); RECEIVE-TIME (on the target) and SEND-TIME of the record at OFFSET, {@code -} when
 * OFFSET is the log end (the group waits for the next record); RE-READ {@code ~N (<= M)} in exact mode (an estimate
 * and the bound; only {@code <= M} when the group's commit rate is unknown), {@code ~N} in time mode (an estimate);
 * SKIPPED {@code N}, or {@code <= N} when the group's position is unknown; LOST the records not copied plus those
 * removed by retention; BASIS {@code checkpoint: source offset N committed TIME, made S s before the source went
 * silent} (0 for one written right after the last answer from the source, whose offsets it holds; {@code made at
 * TIME} when the silence is unknown; {@code , the mirror was behind the group} added when it was) followed by
 * {@code , group rate R records/s} or {@code , group rate unknown} and, when the checkpoint's target offset held
 * another record, {@code , its target offset N did not hold the copy: found at M}, or when the mirror was behind and
 * the records from there to the copy of the committed offset are copies the group consumed on the source,
 * {@code , its target offset N was where the copies went on; all up to the copy of the committed offset were consumed
 * on the source: found at M}; or {@code T TIME
 * (given|last-consumed|source-silent), T - X TIME} followed by {@code , checkpoint position N} or {@code , no
 * checkpoint: position unknown}; or {@code no commit on A, checkpoint made S s before the source went silent: left
 * uncommitted, the group's auto.offset.reset applies}; each followed by {@code ; removed by retention: N on A
 * before copied, N on B} when any was, and {@code ; the mirror stopped copying it at source offset N: CODE: message}
 * when it did. Before the last line, {@code Not copied at all: TOPIC-P of A, N records: CODE: message} for each
 * source partition with no partition on the target. The last line (one line; wrapped here) sums the rows; {@code skipped <= N} when
 * a partition's position is unknown, and the note on apply only when some are skipped. After {@code apply}, one more line: {@code Committed the plan's offsets for group G on the target}, or
 * {@code Already applied: group G has these offsets on the target; nothing written}.
 *
 * <h2>JSON</h2>
 * <pre>
 * {"group", "sourceCluster", "targetCluster", "plannedAt", "sourceLastHeard" (null when unknown),
 *  "lastHeartbeat" (null when none), "notCopied" (every partition the mirror copied),
 *  "buffer": null | {"ms", "derivation": "given"|"auto", and for auto: "targetBehindMs", "spreadMs",
 *            "latencyMinMs", "latencyMaxMs", "records", "heartbeats", "from", "to"},
 *  "partitions": [{"topic", "partition", "mode": "exact"|"time"|"none", "offset" (null for none), "logEndOffset",
 *                  "receiveTime", "sendTime" (null at the log end), "rereads" (the estimate),
 *                  "rereadsKind": "estimate"|"at-most" (at-most: exact mode without commit rate, the bound),
 *                  "rereadsAtMost" (the bound; null in time mode), "skipped", "skippedPositionKnown",
 *                  "notCopied", "removedBySource", "removedOnTarget",
 *                  "checkpoint": null | {"sourceTopic", "sourceOffset", "sourceCommitTime", "checkpointTime",
 *                                        "mirrorBehind", "commitRecordsPerSecond" (null when unknown),
 *                                        "checkpointOffset" (null when it held the copy)},
 *                  "time": null | {"time", "timeFrom": "given"|"last-consumed"|"source-silent", "lookupTime",
 *                                  "position" (null without checkpoint)},
 *                  "uncommitted": null | {"checkpointTime"},
 *                  "mirrorStopped": null | {"sourceTopic", "partition", "sourceOffset" (null when none), "code",
 *                                           "message", "records"}}],
 *  "uncopied": [{"sourceTopic", "partition", "sourceOffset", "code", "message", "records"}],
 *  "totals": {"rereads", "skipped", "skippedPositionKnown", "notCopied", "removed"},
 *  "targetMembers": [{"memberId", "clientId", "host", "assigned": ["T-P", ...]}]}
 * </pre>
 * After {@code apply}, the object has one more field: {@code "applied": "committed"|"unchanged"}.
 *
 * <p>Stateless.
 */
public final class FailoverPlanFormat {
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'")
            .withZone(ZoneOffset.UTC);
    private static final Gson GSON = new GsonBuilder().serializeNulls().disableHtmlEscaping().create();
    private static final String ROW = "%-24s %9s %-5s %16s %16s %-24s %-24s %18s %10s %10s  %s%n";

    private FailoverPlanFormat() {
    }

    public static String text(FailoverPlan plan) {
        StringBuilder text = new StringBuilder();
        text.append("Failover of group ").append(plan.group()).append(" from cluster ").append(plan.sourceCluster())
                .append(" to ").append(plan.targetCluster().isEmpty() ? "the target" : "cluster "
                        + plan.targetCluster()).append(", planned at ").append(time(plan.plannedAtMs())).append('\n');
        text.append(sourceLine(plan)).append('\n');
        plan.buffer().ifPresent(buffer -> text.append("Buffer X: ").append(bufferText(buffer)).append('\n'));
        text.append(String.format(Locale.ROOT, ROW, "TOPIC", "PARTITION", "MODE", "OFFSET", "LOG-END",
                "RECEIVE-TIME", "SEND-TIME", "RE-READ", "SKIPPED", "LOST", "BASIS"));
        for (PartitionPlan p : plan.partitions()) {
            text.append(String.format(Locale.ROOT, ROW, p.partition().topic(), p.partition().partition(),
                    mode(p), p.offset().isPresent() ? Long.toString(p.offset().getAsLong()) : "-", p.logEndOffset(),
                    p.record().map(r -> time(r.receiveTimeMs())).orElse("-"),
                    p.record().map(r -> time(r.sendTimeMs())).orElse("-"), rereadsText(p), skippedText(p.skipped()),
                    p.lost().notCopied() + p.lost().removed(), basisText(plan, p)));
        }
        for (FailoverPlan.MirrorStopped uncopied : plan.uncopied()) {
            text.append("Not copied at all: ").append(uncopied.sourceTopic()).append('-').append(uncopied.partition())
                    .append(" of ").append(plan.sourceCluster()).append(", ").append(uncopied.records())
                    .append(" records: ").append(uncopied.code()).append(": ").append(uncopied.message()).append('\n');
        }
        FailoverPlan.Totals totals = plan.totals();
        text.append("Group ").append(plan.group()).append(": re-reads ~").append(totals.rereads()).append(", skipped ")
                .append(totals.skippedKnown() ? "" : "<= ").append(totals.skipped())
                .append(totals.skipped() > 0 ? " (apply skips them only with --allow-skip)" : "").append(", lost ")
                .append(totals.notCopied() + totals.removed()).append(" (").append(totals.notCopied())
                .append(" not copied, ").append(totals.removed()).append(" removed by retention)\n");
        text.append("Members of group ").append(plan.group()).append(" on the target: ")
                .append(plan.targetMembers().isEmpty() ? "none" : String.join("; ", plan.targetMembers().stream()
                        .map(FailoverPlanFormat::memberText).toList()) + " (apply is refused while there are any)")
                .append('\n');
        return text.toString();
    }

    /** {@code ID (client C, host H, assigned T-P,...)}. */
    static String memberText(FailoverPlan.TargetMember member) {
        return member.memberId() + " (client " + member.clientId() + ", host " + member.host() + ", assigned "
                + (member.assigned().isEmpty() ? "nothing" : member.assigned().stream().map(TopicPartition::toString)
                .collect(Collectors.joining(","))) + ")";
    }

    /** The mode's name, in text and JSON. */
    static String mode(PartitionPlan p) {
        if (p.basis() instanceof Exact) {
            return "exact";
        }
        return p.basis() instanceof ByTime ? "time" : "none";
    }

    /** The plan's text followed by what apply did: one more line. */
    public static String text(FailoverPlan plan, FailoverCommitter.Decision applied) {
        return text(plan) + (applied.alreadyApplied()
                ? "Already applied: group " + plan.group() + " has these offsets on the target; nothing written\n"
                : "Committed the plan's offsets for group " + plan.group()
                + " on the target\n");
    }

    /** One JSON object on one line, without a line end. */
    public static String json(FailoverPlan plan) {
        return GSON.toJson(jsonFields(plan));
    }

    /** The plan's JSON object with one more field, {@code "applied": "committed"|"unchanged"}. */
    public static String json(FailoverPlan plan, FailoverCommitter.Decision applied) {
        Map<String, Object> fields = jsonFields(plan);
        fields.put("applied", applied.alreadyApplied() ? "unchanged" : "committed");
        return GSON.toJson(fields);
    }

    private static Map<String, Object> jsonFields(FailoverPlan plan) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("group", plan.group());
        fields.put("sourceCluster", plan.sourceCluster());
        fields.put("targetCluster", plan.targetCluster());
        fields.put("plannedAt", plan.plannedAtMs());
        fields.put("sourceLastHeard", orNull(plan.sourceLastHeardMs()));
        fields.put("lastHeartbeat", orNull(plan.lastHeartbeatMs()));
        fields.put("notCopied", plan.notCopied());
        fields.put("buffer", plan.buffer().map(FailoverPlanFormat::bufferJson).orElse(null));
        List<Map<String, Object>> partitions = new ArrayList<>();
        plan.partitions().forEach(p -> partitions.add(partitionJson(p)));
        fields.put("partitions", partitions);
        fields.put("uncopied", plan.uncopied().stream().map(FailoverPlanFormat::stoppedJson).toList());
        FailoverPlan.Totals totals = plan.totals();
        Map<String, Object> sums = new LinkedHashMap<>();
        sums.put("rereads", totals.rereads());
        sums.put("skipped", totals.skipped());
        sums.put("skippedPositionKnown", totals.skippedKnown());
        sums.put("notCopied", totals.notCopied());
        sums.put("removed", totals.removed());
        fields.put("totals", sums);
        fields.put("targetMembers", plan.targetMembers().stream().map(m -> {
            Map<String, Object> member = new LinkedHashMap<>();
            member.put("memberId", m.memberId());
            member.put("clientId", m.clientId());
            member.put("host", m.host());
            member.put("assigned", m.assigned().stream().map(TopicPartition::toString).toList());
            return member;
        }).toList());
        return fields;
    }

    /** A time as printed: UTC with milliseconds. */
    static String time(long ms) {
        return TIME.format(Instant.ofEpochMilli(ms));
    }

    /** A duration as printed: seconds with milliseconds. */
    static String seconds(long ms) {
        return String.format(Locale.ROOT, "%.3f s", ms / 1000.0);
    }

    private static String sourceLine(FailoverPlan plan) {
        String source = "Source " + plan.sourceCluster() + ": ";
        if (plan.lastHeartbeatMs().isEmpty()) {
            return source + "no heartbeat on the target, records not copied unknown";
        }
        String heard = plan.sourceLastHeardMs().isPresent()
                ? "the mirror last heard from it at " + time(plan.sourceLastHeardMs().getAsLong())
                : "the mirror never heard from it";
        return source + heard + " (last heartbeat " + time(plan.lastHeartbeatMs().getAsLong()) + "); "
                + plan.notCopied() + " records not copied, lost with it";
    }

    private static String bufferText(Buffer buffer) {
        if (buffer.derivedFrom().isEmpty()) {
            return seconds(buffer.ms()) + " (--buffer)";
        }
        LatencySample latency = buffer.derivedFrom().get();
        return seconds(buffer.ms()) + " (auto) = " + seconds(latency.targetBehindMs())
                + " the target's clock ran behind the source's + " + seconds(latency.spreadMs())
                + " spread of the mirror's latency (" + seconds(latency.receiveMinMs()) + " to "
                + seconds(latency.receiveMaxMs()) + " over " + latency.records() + " records in "
                + latency.heartbeats() + " heartbeats, " + time(latency.fromMs()) + " to " + time(latency.toMs())
                + ")";
    }

    private static String skippedText(FailoverPlan.Skipped skipped) {
        return (skipped.positionKnown() || skipped.records() == 0 ? "" : "<= ") + skipped.records();
    }

    private static String rereadsText(PartitionPlan p) {
        if (p.basis() instanceof Uncommitted) {
            return "-";
        }
        String estimate = "~" + p.rereads();
        if (p.rereadsAtMost().isEmpty()) {
            return estimate;
        }
        String atMost = "<= " + p.rereadsAtMost().getAsLong();
        return p.rereadsEstimated() ? estimate + " (" + atMost + ")" : atMost;
    }

    /** Why the plan resumes away from the checkpoint's target offset; "" when it resumes there. */
    private static String movedText(OptionalLong checkpointOffset, long offset) {
        if (checkpointOffset.isEmpty()) {
            return "";
        }
        long at = checkpointOffset.getAsLong();
        return ", its target offset " + at + (at < offset ? " was where the copies went on; all up to the copy of the "
                + "committed offset were consumed on the source: found at " : " did not hold the copy: found at ")
                + offset;
    }

    private static String basisText(FailoverPlan plan, PartitionPlan p) {
        String basis;
        if (p.basis() instanceof Exact exact) {
            basis = "checkpoint: source offset " + exact.sourceOffset() + " committed "
                    + time(exact.sourceCommitTimeMs()) + ", " + made(plan, exact.checkpointTimeMs())
                    + (exact.mirrorBehind() ? ", the mirror was behind the group" : "") + ", group rate "
                    + exact.commitRate().map(r -> String.format(Locale.ROOT, "%.3f records/s", r.perSecond()))
                    .orElse("unknown") + movedText(exact.checkpointOffset(), p.offset().getAsLong());
        } else if (p.basis() instanceof ByTime byTime) {
            basis = "T " + time(byTime.timeMs()) + " (" + byTime.source().label() + "), T - X "
                    + time(byTime.lookupMs()) + (byTime.position().isPresent() ? ", checkpoint position "
                    + byTime.position().getAsLong() : ", no checkpoint: position unknown");
        } else {
            basis = "no commit on " + plan.sourceCluster() + ", checkpoint "
                    + made(plan, ((Uncommitted) p.basis()).checkpointTimeMs()) + ": left uncommitted, the group's "
                    + "auto.offset.reset applies";
        }
        FailoverPlan.Lost lost = p.lost();
        if (lost.removed() > 0) {
            basis += "; removed by retention: " + lost.removedBySource() + " on " + plan.sourceCluster()
                    + " before copied, " + lost.removedOnTarget() + " on "
                    + (plan.targetCluster().isEmpty() ? "the target" : plan.targetCluster());
        }
        if (p.stopped().isPresent()) {
            FailoverPlan.MirrorStopped stopped = p.stopped().get();
            basis += "; the mirror stopped copying it" + (stopped.sourceOffset().isPresent() ? " at source offset "
                    + stopped.sourceOffset().getAsLong() : "") + ": " + stopped.code() + ": " + stopped.message();
        }
        return basis;
    }

    /** When a checkpoint was made: before the silence when that is known. */
    private static String made(FailoverPlan plan, long checkpointTimeMs) {
        return plan.sourceLastHeardMs().isPresent()
                ? "made " + seconds(Math.max(0, plan.sourceLastHeardMs().getAsLong() - checkpointTimeMs))
                + " before the source went silent"
                : "made at " + time(checkpointTimeMs);
    }

    private static Map<String, Object> bufferJson(Buffer buffer) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("ms", buffer.ms());
        fields.put("derivation", buffer.derivedFrom().isPresent() ? "auto" : "given");
        buffer.derivedFrom().ifPresent(latency -> {
            fields.put("targetBehindMs", latency.targetBehindMs());
            fields.put("spreadMs", latency.spreadMs());
            fields.put("latencyMinMs", latency.receiveMinMs());
            fields.put("latencyMaxMs", latency.receiveMaxMs());
            fields.put("records", latency.records());
            fields.put("heartbeats", latency.heartbeats());
            fields.put("from", latency.fromMs());
            fields.put("to", latency.toMs());
        });
        return fields;
    }

    private static Map<String, Object> partitionJson(PartitionPlan p) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("topic", p.partition().topic());
        fields.put("partition", p.partition().partition());
        fields.put("mode", mode(p));
        fields.put("offset", orNull(p.offset()));
        fields.put("logEndOffset", p.logEndOffset());
        fields.put("receiveTime", p.record().map(FailoverPlan.RecordTimes::receiveTimeMs).orElse(null));
        fields.put("sendTime", p.record().map(FailoverPlan.RecordTimes::sendTimeMs).orElse(null));
        fields.put("rereads", p.rereads());
        fields.put("rereadsKind", p.rereadsEstimated() ? "estimate" : "at-most");
        fields.put("rereadsAtMost", orNull(p.rereadsAtMost()));
        fields.put("skipped", p.skipped().records());
        fields.put("skippedPositionKnown", p.skipped().positionKnown());
        fields.put("notCopied", p.lost().notCopied());
        fields.put("removedBySource", p.lost().removedBySource());
        fields.put("removedOnTarget", p.lost().removedOnTarget());
        Map<String, Object> checkpoint = null;
        Map<String, Object> time = null;
        Map<String, Object> uncommitted = null;
        if (p.basis() instanceof Exact e) {
            checkpoint = new LinkedHashMap<>();
            checkpoint.put("sourceTopic", e.sourceTopic());
            checkpoint.put("sourceOffset", e.sourceOffset());
            checkpoint.put("sourceCommitTime", e.sourceCommitTimeMs());
            checkpoint.put("checkpointTime", e.checkpointTimeMs());
            checkpoint.put("mirrorBehind", e.mirrorBehind());
            checkpoint.put("commitRecordsPerSecond", e.commitRate().map(CommitRate::perSecond).orElse(null));
            checkpoint.put("checkpointOffset", orNull(e.checkpointOffset()));
        } else if (p.basis() instanceof ByTime t) {
            time = new LinkedHashMap<>();
            time.put("time", t.timeMs());
            time.put("timeFrom", t.source().label());
            time.put("lookupTime", t.lookupMs());
            time.put("position", orNull(t.position()));
        } else if (p.basis() instanceof Uncommitted u) {
            uncommitted = Map.of("checkpointTime", u.checkpointTimeMs());
        }
        fields.put("checkpoint", checkpoint);
        fields.put("time", time);
        fields.put("uncommitted", uncommitted);
        fields.put("mirrorStopped", p.stopped().map(FailoverPlanFormat::stoppedJson).orElse(null));
        return fields;
    }

    private static Map<String, Object> stoppedJson(FailoverPlan.MirrorStopped stopped) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("sourceTopic", stopped.sourceTopic());
        fields.put("partition", stopped.partition());
        fields.put("sourceOffset", orNull(stopped.sourceOffset()));
        fields.put("code", stopped.code());
        fields.put("message", stopped.message());
        fields.put("records", stopped.records());
        return fields;
    }

    private static Long orNull(OptionalLong value) {
        return value.isPresent() ? value.getAsLong() : null;
    }
}
