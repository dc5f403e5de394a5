package io.tidemark.cli;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import io.tidemark.proto.record.Header;
import io.tidemark.proto.record.ProvenanceHeaders;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Prints one JSON object per line, with the field order given, for scripts (--output json). */
final class JsonLines {
    private static final Gson GSON = new GsonBuilder().serializeNulls().disableHtmlEscaping().create();

    private JsonLines() {
    }

    static void print(PrintWriter out, Map<String, ?> fields) {
        out.println(GSON.toJson(fields));
    }

    /**
     * Headers as a JSON object: values as text, the provenance header as an object of its fields
     * ({@link ProvenanceHeaders#displayValue}).
     */
    static Map<String, Object> headers(List<Header> headers) {
        Map<String, Object> fields = new LinkedHashMap<>();
        for (Header header : headers) {
            fields.put(header.name(), ProvenanceHeaders.displayValue(header));
        }
        return fields;
    }

    static Gson gson() {
        return GSON;
    }
}
