package io.tidemark.cli;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;

import java.io.PrintWriter;
import java.util.Map;

/** Prints one JSON object per line, with the field order given, for scripts (--output json). */
final class JsonLines {
    private static final Gson GSON = new GsonBuilder().serializeNulls().disableHtmlEscaping().create();

    private JsonLines() {
    }

    static void print(PrintWriter out, Map<String, ?> fields) {
        out.println(GSON.toJson(fields));
    }

    static Gson gson() {
        return GSON;
    }
}
