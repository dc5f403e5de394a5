package io.tidemark.core.topic;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.util.regex.Pattern;

/** The names a user may give a topic: 1 to 249 of a-z A-Z 0-9 . _ -, not "." or "..", not starting with "__". */
public final class TopicNames {
    private static final Pattern LEGAL_NAME = Pattern.compile("[a-zA-Z0-9._-]{1,249}");

    private TopicNames() {
    }

    /** @throws TidemarkException INVALID_REQUEST saying what is allowed */
    public static void checkUserTopic(String name) {
        if (name == null || !LEGAL_NAME.matcher(name).matches() || name.equals(".") || name.equals("..")) {
            throw new TidemarkException(ErrorCode.INVALID_REQUEST, "topic name '" + name + "' is not allowed: use 1 "
                    + "to 249 characters from a-z A-Z 0-9 . _ -, other than '.' and '..'");
        }
        if (name.startsWith(Topic.INTERNAL_PREFIX)) {
            throw new TidemarkException(ErrorCode.INVALID_REQUEST, "topic name '" + name + "' is not allowed: names "
                    + "starting with '" + Topic.INTERNAL_PREFIX + "' are reserved for internal topics");
        }
    }
}
