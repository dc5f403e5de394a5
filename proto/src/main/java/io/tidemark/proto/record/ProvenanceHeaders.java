package io.tidemark.proto.record;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The provenance a mirror adds to every record it copies: one header with the reserved name {@value #NAME}, whose
 * value holds the origin cluster, topic, topic id, partition, offset and ReceiveTime and the path of clusters the record
 * crossed, in the compact binary layout of {@link ProvenanceFormat}. A copied record keeps its own headers first, in
 * their order, then gets this one.
 *
 * <p>"Origin" is the last hop: a record copied A to B to C carries, on C, B's topic, partition, offset and ReceiveTime
 * and the path {@code [A, B]}. That is what exactly-once copying needs (the mirror into C reads B's partition in B's
 * offsets) and what the latency of the hop is measured on; SendTime is the producer's time end to end, and the
 * path keeps the clusters. Copying a record that already carries provenance replaces the origin and extends the
 * path; no other header named {@value #NAME} survives a copy.
 *
 * <p>The loop rule: a record is never copied into a cluster on its path ({@link #crossed}). So A to B and B to A can
 * run together over the same topic names: what B got from A has path {@code [A]} and is not copied back.
 *
 * <p>Records of a mirrored batch ({@link RecordBatchFormat#ATTRIBUTE_MIRRORED}) must carry this header; the broker
 * reads it with {@link MirroredBatchScanner}, without decoding the records. A record carries one; readers take the
 * last, as the scanner does.
 *
 * <p>Stateless.
 */
public final class ProvenanceHeaders {
    public static final String NAME = "tidemark.origin";

    private ProvenanceHeaders() {
    }

    /**
     * Where a copied record came from.
     *
     * @param originReceiveTimeMs its ReceiveTime there, ms since the epoch, not negative
     * @param path                the clusters crossed, oldest first, ending with the origin's cluster
     */
    public record Provenance(OriginPartition origin, long originOffset, long originReceiveTimeMs, List<String> path) {
        public Provenance {
            Objects.requireNonNull(origin, "origin");
            if (originOffset < 0) {
                throw new IllegalArgumentException("origin offset " + originOffset + " is negative");
            }
            if (originReceiveTimeMs < 0) {
                throw new IllegalArgumentException("origin ReceiveTime " + originReceiveTimeMs
                        + " is negative; it is ms since the epoch");
            }
            path = List.copyOf(path);
            if (path.isEmpty() || !path.get(path.size() - 1).equals(origin.cluster())) {
                throw new IllegalArgumentException("path " + path + " does not end with the origin cluster "
                        + origin.cluster());
            }
            path.forEach(OriginPartition::checkClusterName);
        }
    }

    /** Whether the header name is the reserved one, which a copy drops and replaces. */
    public static boolean reserved(String name) {
        return name.equals(NAME);
    }

    /**
     * The headers of the copy of a record: its own headers without reserved ones, then the provenance of the copy.
     *
     * @param headers             the record's headers as read from the origin
     * @param origin              where the record is read from
     * @param originOffset        its offset there
     * @param originReceiveTimeMs its ReceiveTime there; a malformed provenance header of the record counts as none
     *                            ({@link #path}) and is dropped like any reserved one
     */
    public static List<Header> forCopy(List<Header> headers, OriginPartition origin, long originOffset,
                                       long originReceiveTimeMs) {
        List<String> path = new ArrayList<>(path(headers));
        path.add(origin.cluster());
        Provenance provenance = new Provenance(origin, originOffset, originReceiveTimeMs, path);
        List<Header> copy = new ArrayList<>(headers.size() + 1);
        for (Header header : headers) {
            if (!reserved(header.name())) {
                copy.add(header);
            }
        }
        copy.add(encode(provenance));
        return copy;
    }

    /** The provenance header of a copy. */
    public static Header encode(Provenance provenance) {
        return new Header(NAME, ProvenanceFormat.encode(provenance));
    }

    /**
     * The provenance of a record, when it carries one.
     *
     * @throws IllegalArgumentException when its provenance header is malformed, naming the field
     */
    public static Optional<Provenance> read(List<Header> headers) {
        for (int i = headers.size() - 1; i >= 0; i--) {
            if (reserved(headers.get(i).name())) {
                return Optional.of(ProvenanceFormat.decode(headers.get(i).value()));
            }
        }
        return Optional.empty();
    }

    /**
     * A header's value for people and for JSON: the provenance header's fields as a map in the order cluster, topic,
     * topicId (the UUID's text), partition, offset, receiveTime (ms since the epoch), path (a list, oldest first),
     * or, when it is malformed, text saying why and its bytes in hex; any other header's value as UTF-8 text.
     */
    public static Object displayValue(Header header) {
        if (!reserved(header.name())) {
            return new String(header.value(), StandardCharsets.UTF_8);
        }
        try {
            return displayFields(ProvenanceFormat.decode(header.value()));
        } catch (IllegalArgumentException e) {
            return e.getMessage() + "; bytes " + HexFormat.of().formatHex(header.value());
        }
    }

    private static Map<String, Object> displayFields(Provenance provenance) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("cluster", provenance.origin().cluster());
        fields.put("topic", provenance.origin().topic());
        fields.put("topicId", provenance.origin().topicId().toString());
        fields.put("partition", provenance.origin().partition());
        fields.put("offset", provenance.originOffset());
        fields.put("receiveTime", provenance.originReceiveTimeMs());
        fields.put("path", provenance.path());
        return fields;
    }

    /**
     * The clusters a record crossed, oldest first; empty for a record that was never copied, and for one whose
     * provenance header is malformed: no mirror wrote that (brokers check every mirrored batch's provenance), so a
     * producer set the reserved header, and the record must not stop a mirror that copies it.
     */
    public static List<String> path(List<Header> headers) {
        try {
            return read(headers).map(Provenance::path).orElse(List.of());
        } catch (IllegalArgumentException e) {
            return List.of();
        }
    }

    /** Whether the record crossed (or started in) {@code cluster}: the loop rule says not to copy it there. */
    public static boolean crossed(List<Header> headers, String cluster) {
        return path(headers).contains(cluster);
    }
}
