package io.tidemark.core.config;

/**
 * A configuration key as the documentation table shows it ({@link ConfigDocs}): a number ({@link ConfigKey}) or a
 * text ({@link TextKey}).
 */
public sealed interface DeclaredKey permits ConfigKey, TextKey {
    String name();

    /** "int", "long" or "string". */
    String typeName();

    /** The default as the table shows it. */
    String defaultText();

    String unit();

    /** The values allowed, in words. */
    String allowedText();

    /** What the key does. */
    String doc();
}
