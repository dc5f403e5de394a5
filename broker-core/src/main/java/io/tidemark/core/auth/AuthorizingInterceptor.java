package io.tidemark.core.auth;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.util.Optional;

/**
 * Holds every call to its method's {@link AccessRules} rule: the request is checked as it arrives, before the service
 * sees it, and a refused call ends with the authorizer's error, its service never called; the answer passes through
 * the rule's filter on its way out. A method without a rule is refused with INTERNAL_ERROR (a bug: every method has
 * one). Runs after the {@link Authenticator}, in the call's context.
 *
 * <p>A refusal closes the call from the listener, before the service's handler ran; that is safe only for calls whose
 * handler starts at the half-close (unary ones): the streaming methods' rules check per message in the service
 * itself.
 */
public final class AuthorizingInterceptor implements ServerInterceptor {
    private final AccessRules rules;
    private final Authorizer authorizer;

    public AuthorizingInterceptor(AccessRules rules, Authorizer authorizer) {
        this.rules = rules;
        this.authorizer = authorizer;
    }

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                      ServerCallHandler<Q, A> next) {
        String method = call.getMethodDescriptor().getFullMethodName();
        Optional<AccessRules.Rule> found = rules.rule(method);
        if (found.isEmpty()) {
            return Refusal.close(call, new TidemarkException(ErrorCode.INTERNAL_ERROR, "method " + method
                    + " has no access rule; nothing was done"));
        }
        AccessRules.Rule rule = found.get();
        CallAccess access = CallAccess.current(authorizer);
        ServerCall<Q, A> filtered = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            @SuppressWarnings("unchecked")
            public void sendMessage(A message) {
                super.sendMessage((A) rule.answer().apply(access, message));
            }
        };
        return new Checked<>(next.startCall(filtered, headers), call, rule, access);
    }

    /** Passes a request on once its rule allows it; after a refusal, passes nothing more on. */
    private static final class Checked<Q, A>
            extends ForwardingServerCallListener.SimpleForwardingServerCallListener<Q> {
        private final ServerCall<Q, A> call;
        private final AccessRules.Rule rule;
        private final CallAccess access;
        private boolean refused;

        Checked(ServerCall.Listener<Q> delegate, ServerCall<Q, A> call, AccessRules.Rule rule, CallAccess access) {
            super(delegate);
            this.call = call;
            this.rule = rule;
            this.access = access;
        }

        @Override
        public void onMessage(Q message) {
            if (refused) {
                return;
            }
            try {
                rule.request().accept(access, message);
            } catch (TidemarkException e) {
                refused = true;
                Refusal.close(call, e);
                return;
            }
            super.onMessage(message);
        }

        @Override
        public void onHalfClose() {
            if (!refused) {
                super.onHalfClose();
            }
        }
    }
}
