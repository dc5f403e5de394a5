package io.tidemark.core.config;

import java.util.List;

/** Renders declared config keys as the Markdown table that docs/configuration.md holds. */
public final class ConfigDocs {
    private ConfigDocs() {
    }

    public static String markdownTable(List<? extends DeclaredKey> keys) {
        StringBuilder out = new StringBuilder("| key | type | default | unit | allowed | what it does |\n")
                .append("| --- | --- | --- | --- | --- | --- |\n");
        for (DeclaredKey key : keys) {
            out.append("| `").append(key.name()).append("` | ").append(key.typeName())
                    .append(" | ").append(key.defaultText()).append(" | ").append(key.unit()).append(" | ")
                    .append(key.allowedText()).append(" | ").append(key.doc()).append(" |\n");
        }
        return out.toString();
    }
}
