package io.tidemark.core.auth;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

/**
 * Who a request comes from, as ACLs name it: {@code TYPE:NAME}, Kafka's form. Tidemark's principals are of type
 * {@code User}: the name a client certificate's subject maps to ({@link PrincipalMapper}), or a token's subject. A
 * client the broker cannot name (plain text, or TLS without a client certificate and without a token) is
 * {@link #ANONYMOUS}.
 */
public record Principal(String type, String name) {
    public static final String USER = "User";
    public static final Principal ANONYMOUS = new Principal(USER, "ANONYMOUS");

    public Principal {
        if (type.isEmpty() || type.contains(":") || name.isEmpty()) {
            throw new IllegalArgumentException("a principal needs a type without ':' and a name, not '" + type + ":"
                    + name + "'");
        }
    }

    public static Principal user(String name) {
        return new Principal(USER, name);
    }

    /**
     * Reads {@code TYPE:NAME} (the name may hold ':').
     *
     * @param what names the setting or flag the text came from, for the error
     * @throws TidemarkException INVALID_REQUEST when the text is not of that form
     */
    public static Principal parse(String text, String what) {
        int colon = text.indexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new TidemarkException(ErrorCode.INVALID_REQUEST, what + ": '" + text + "' is not a principal; "
                    + "write TYPE:NAME, e.g. User:alice");
        }
        return new Principal(text.substring(0, colon), text.substring(colon + 1));
    }

    @Override
    public String toString() {
        return type + ":" + name;
    }
}
