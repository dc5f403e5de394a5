package io.tidemark.core.auth;

import io.grpc.Context;

/**
 * Who a call comes from, as the broker authenticated it ({@link Authenticator}): the principal, the client's IP
 * address (what ACL hosts match), and whether it is a broker of the cluster (a certificate whose subject matches
 * {@code tls.broker.subjects}). Carried in the call's gRPC context.
 */
public record Caller(Principal principal, String host, boolean broker) {
    static final Context.Key<Caller> KEY = Context.key("tidemark-caller");

    /** The caller of the call being served; {@link Principal#ANONYMOUS} outside a call the authenticator saw. */
    public static Caller current() {
        Caller caller = KEY.get();
        return caller == null ? new Caller(Principal.ANONYMOUS, "", false) : caller;
    }
}
