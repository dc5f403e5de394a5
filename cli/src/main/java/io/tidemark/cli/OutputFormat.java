package io.tidemark.cli;

/** How a read command prints: for people, or one JSON object per line with stable field names for scripts. */
public enum OutputFormat {
    text,
    json
}
