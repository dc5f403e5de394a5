package io.tidemark.core.config;

import java.util.List;

/** Renders declared config keys as the Markdown table that docs/configuration.md holds. */
public final class ConfigDocs {
    private ConfigDocs() {
    }

    public static String markdownTable(List<ConfigKey> keys) {
        StringBuilder out = new StringBuilder("| key | type | default | unit | allowed | what it does |\n")
                .append("| --- | --- | --- | --- | --- | --- |\n");
        for (ConfigKey key : keys) {
            String dflt = key.defaultValue() == ConfigKey.UNLIMITED && key.allowed().unlimited()
                    ? "-1 (unlimited)" : Long.toString(key.defaultValue());
            out.append("| `").append(key.name()).append("` | ").append(key.type().name().toLowerCase())
                    .append(" | ").append(dflt).append(" | ").append(key.unit()).append(" | ")
                    .append(key.allowed()).append(" | ").append(key.doc()).append(" |\n");
        }
        return out.toString();
    }
}
