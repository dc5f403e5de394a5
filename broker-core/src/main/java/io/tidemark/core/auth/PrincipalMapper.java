package io.tidemark.core.auth;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Names the client behind a TLS client certificate: turns the certificate's subject, a distinguished name in RFC 2253
 * form as {@link javax.security.auth.x500.X500Principal#getName()} gives it ({@code CN=alice,OU=eng,O=Example}), into
 * a {@link Principal#user user principal} by the rules of {@value #PRINCIPAL_MAPPING_RULES}. The rules read as Kafka's
 * {@code ssl.principal.mapping.rules} (KIP-371) do, so rules written for Kafka name the same principals here:
 * <ul>
 *   <li>the value is a comma-separated list of rules, each {@code DEFAULT} or {@code RULE:pattern/replacement/},
 *       the latter optionally followed by {@code L} or {@code U}. Whitespace around a rule is ignored and kept within
 *       it; an empty rule between two commas is skipped, but a value without any rule is refused;</li>
 *   <li>a pattern and a replacement each run to the next slash no backslash escapes, so they may hold commas. A slash
 *       within them is written {@code \/}; every escape is left as written for Java's regular expressions, to which
 *       {@code \/} and {@code \,} are a slash and a comma;</li>
 *   <li>the rules are tried in order, and the first whose pattern (a Java regular expression) matches the whole
 *       subject names the principal: {@code DEFAULT} by the subject itself, a {@code RULE} by the subject with its
 *       pattern's matches replaced by the replacement, in which {@code $1}, {@code $2}, ... are the pattern's groups
 *       ({@code $0} the match, {@code ${name}} a named group; a {@code $n} whose first digit names no group is
 *       text). {@code L} then lower-cases the name and {@code U} upper-cases it;</li>
 *   <li>a subject no rule matches, or one its rule maps to an empty name, is refused.</li>
 * </ul>
 * As in Kafka, a rule replaces every match of its pattern in the subject, as {@link String#replaceAll} does, not the
 * whole-subject match it was chosen by: {@code RULE:CN=([^,]*).*?/$1/} maps {@code CN=alice,OU=eng} to
 * {@code alice,OU=eng}, because the lazy {@code .*?} first matches {@code CN=alice} alone. Anchored patterns that end
 * greedily ({@code ^CN=([^,]*).*$}) match once, the whole subject.
 *
 * <p>Immutable and thread-safe.
 */
public final class PrincipalMapper {
    public static final String PRINCIPAL_MAPPING_RULES = "tls.principal.mapping.rules";
    public static final String DEFAULT_PRINCIPAL_MAPPING_RULES = "DEFAULT";
    private static final String DEFAULT = "DEFAULT";
    private static final String RULE = "RULE:";
    /** What {@code \s} matches: the whitespace Kafka skips around each rule. */
    private static final String SPACES = " \t\n\u000B\f\r";
    private static final String ALLOWED = "allowed: DEFAULT and RULE:pattern/replacement/ separated by commas, where "
            + "the pattern is a Java regular expression the whole subject must match, the replacement may name its "
            + "groups ($1), \\/ is a slash within either, and an L or U after the last slash lower- or upper-cases the "
            + "name; e.g. RULE:^CN=([^,]+),OU=eng,.*$/$1/L,DEFAULT";

    private final String text;
    private final List<Rule> rules;

    private PrincipalMapper(String text, List<Rule> rules) {
        this.text = text;
        this.rules = List.copyOf(rules);
    }

    /**
     * Reads a value of {@value #PRINCIPAL_MAPPING_RULES}.
     *
     * @throws TidemarkException INVALID_CONFIG naming the part of {@code rules} that is not a rule, and what is allowed
     */
    public static PrincipalMapper parse(String rules) {
        // trim() first, then \s around each rule: what Kafka strips
        String text = rules.trim();
        List<Rule> parsed = new ArrayList<>();
        int at = 0;
        do {
            at = skipSpaces(text, at);
            Optional<Rule> rule = readRule(text, at);
            int end = at + rule.map(read -> read.text().length()).orElse(0);
            int next = skipSpaces(text, end);
            if (next < text.length() && text.charAt(next) != ',') {
                throw invalid(rule.isEmpty() ? "'" + upToComma(text, at) + "' is not a rule"
                        : "after '" + rule.get().text() + "' comes '" + upToComma(text, end) + "', where only "
                        // only a RULE without its L or U ends in a slash
                        + (rule.get().text().endsWith("/") ? "L or U, right after the slash, or " : "")
                        + "a comma may follow");
            }
            rule.ifPresent(parsed::add);
            at = next + 1;
        } while (at <= text.length());
        if (parsed.isEmpty()) {
            throw invalid("'" + rules + "' holds no rule");
        }
        return new PrincipalMapper(rules, parsed);
    }

    /**
     * The principal of the client whose certificate has the subject {@code distinguishedName}.
     *
     * @throws TidemarkException AUTHENTICATION_FAILED when no rule matches the subject, or its rule maps it to an empty
     *         name
     */
    public Principal map(String distinguishedName) {
        for (Rule rule : rules) {
            Optional<String> name = rule.naming().apply(distinguishedName);
            if (name.isPresent()) {
                if (name.get().isEmpty()) {
                    throw new TidemarkException(ErrorCode.AUTHENTICATION_FAILED, "rule '" + rule.text() + "' of "
                            + PRINCIPAL_MAPPING_RULES + " maps the client certificate's subject '" + distinguishedName
                            + "' to an empty name");
                }
                return Principal.user(name.get());
            }
        }
        throw new TidemarkException(ErrorCode.AUTHENTICATION_FAILED, "no rule of " + PRINCIPAL_MAPPING_RULES + " '"
                + text + "' matches the client certificate's subject '" + distinguishedName + "' (a rule's pattern "
                + "must match the whole subject)");
    }

    /** The rules as {@link #parse} read them. */
    @Override
    public String toString() {
        return text;
    }

    /** One rule as written, and the name it gives a subject: empty when its pattern does not match the subject. */
    private record Rule(String text, Function<String, Optional<String>> naming) {
    }

    /** What a rule's suffix does to the name. */
    private enum Case {
        AS_IS, LOWER, UPPER;

        String apply(String name) {
            return switch (this) {
                case AS_IS -> name;
                case LOWER -> name.toLowerCase(Locale.ROOT);
                case UPPER -> name.toUpperCase(Locale.ROOT);
            };
        }
    }

    /** The rule that starts at {@code start}, or empty when none does (an empty rule, or one of neither form). */
    private static Optional<Rule> readRule(String text, int start) {
        if (text.startsWith(DEFAULT, start)) {
            return Optional.of(new Rule(DEFAULT, Optional::of));
        }
        if (!text.startsWith(RULE, start)) {
            return Optional.empty();
        }
        int patternStart = start + RULE.length();
        int patternEnd = unescapedSlash(text, patternStart);
        if (patternEnd < 0) {
            throw invalid("'" + text.substring(start) + "' has no slash after its pattern");
        }
        int replacementEnd = unescapedSlash(text, patternEnd + 1);
        if (replacementEnd < 0) {
            throw invalid("'" + text.substring(start) + "' has no slash after its replacement");
        }
        int suffix = replacementEnd + 1;
        Case textCase = text.startsWith("L", suffix) ? Case.LOWER : text.startsWith("U", suffix) ? Case.UPPER
                : Case.AS_IS;
        String ruleText = text.substring(start, textCase == Case.AS_IS ? suffix : suffix + 1);
        Pattern pattern = compile(text.substring(patternStart, patternEnd), ruleText);
        String replacement = replacement(pattern, text.substring(patternEnd + 1, replacementEnd), ruleText);
        return Optional.of(new Rule(ruleText, subject -> replace(pattern, replacement, textCase, subject)));
    }

    private static Pattern compile(String pattern, String ruleText) {
        try {
            return Pattern.compile(pattern);
        } catch (PatternSyntaxException e) {
            throw invalid("the pattern of '" + ruleText + "' is not a Java regular expression (" + e.getDescription()
                    + (e.getIndex() >= 0 ? " near index " + e.getIndex() : "") + ")");
        }
    }

    /** The replacement as written, ready for {@link Matcher#replaceAll(String)} and checked for {@code pattern}. */
    private static String replacement(Pattern pattern, String written, String ruleText) {
        String replacement = literalMissingGroups(written, pattern.matcher("").groupCount());
        // Java checks a replacement only when it applies one. The empty alternative ahead of the rule's own pattern
        // matches "" at once and keeps the pattern's groups and their names, so Java checks it now, not when the
        // first client connects.
        try {
            Pattern.compile("|" + pattern.pattern()).matcher("").replaceAll(replacement);
        } catch (IllegalArgumentException e) {
            throw invalid("the replacement of '" + ruleText + "' cannot be applied (" + e.getMessage() + ")");
        }
        return replacement;
    }

    private static Optional<String> replace(Pattern pattern, String replacement, Case textCase, String subject) {
        Matcher matcher = pattern.matcher(subject);
        if (!matcher.matches()) {
            return Optional.empty();
        }
        return Optional.of(textCase.apply(matcher.replaceAll(replacement)));
    }

    /**
     * {@code replacement} with a backslash before each {@code $} whose first digit names no group of the pattern, so
     * that Java reads it as text (as Kafka means to) rather than failing. Java reads a further digit only while the
     * number still names a group: with one group, {@code $12} is group 1 and then "2". Its backslashes come in pairs,
     * as {@link #unescapedSlash} reads them.
     */
    private static String literalMissingGroups(String replacement, int groupCount) {
        StringBuilder escaped = new StringBuilder(replacement.length());
        for (int i = 0; i < replacement.length(); i++) {
            char c = replacement.charAt(i);
            if (c == '\\') {
                // an escaped character stays as it is: it is never a group's $
                escaped.append(c).append(replacement.charAt(++i));
            } else {
                char next = i + 1 < replacement.length() ? replacement.charAt(i + 1) : ' ';
                if (c == '$' && next >= '1' && next <= '9' && next - '0' > groupCount) {
                    escaped.append('\\');
                }
                escaped.append(c);
            }
        }
        return escaped.toString();
    }

    /** Where the first slash at or after {@code from} that no backslash escapes is, or -1. */
    private static int unescapedSlash(String text, int from) {
        for (int i = from; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\\') {
                i++;
            } else if (c == '/') {
                return i;
            }
        }
        return -1;
    }

    /** Past the whitespace at {@code from}. */
    private static int skipSpaces(String text, int from) {
        int at = from;
        while (at < text.length() && SPACES.indexOf(text.charAt(at)) >= 0) {
            at++;
        }
        return at;
    }

    /** The text from {@code from} to the next comma or the end, without trailing whitespace. */
    private static String upToComma(String text, int from) {
        int comma = text.indexOf(',', from);
        return text.substring(from, comma < 0 ? text.length() : comma).stripTrailing();
    }

    private static TidemarkException invalid(String problem) {
        return new TidemarkException(ErrorCode.INVALID_CONFIG, "invalid value for " + PRINCIPAL_MAPPING_RULES + ": "
                + problem + "; " + ALLOWED);
    }
}
