package io.tidemark.core.auth;

import io.grpc.Attributes;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerTransportFilter;
import io.tidemark.proto.auth.BearerToken;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Names the caller of every call ({@link Caller}, in the call's context). Once per connection, as it becomes ready
 * (a {@link ServerTransportFilter}): the client's IP address, and from a TLS client certificate (already verified
 * against the CA) the principal its subject maps to ({@link PrincipalMapper}) and whether it is a broker (the
 * subject matches {@code tls.broker.subjects}). A connection without a certificate is {@link Principal#ANONYMOUS}.
 * A certificate no mapping rule takes fails each call of the connection with AUTHENTICATION_FAILED naming the subject.
 *
 * <p>A call carrying a token ({@code authorization: Bearer <token>}, {@link BearerToken}) is made by the token's
 * principal instead, checked at each call ({@link TokenVerifier}: signature, expiry), whatever certificate the
 * connection showed; a token the broker cannot take fails the call with AUTHENTICATION_FAILED saying why.
 */
public final class Authenticator extends ServerTransportFilter implements ServerInterceptor {
    private static final Attributes.Key<Identity> IDENTITY = Attributes.Key.create("tidemark-identity");

    /** What a connection's certificate says: a caller, or why it names none. */
    private record Identity(Caller caller, Optional<TidemarkException> refused) {
    }

    private final PrincipalMapper mapper;
    private final Optional<Pattern> brokerSubjects;
    private final Optional<TokenVerifier> tokens;

    /**
     * @param brokerSubjects the subjects of brokers' certificates; empty in plain text
     * @param tokens         checks the tokens clients send; empty when the broker takes none
     */
    public Authenticator(PrincipalMapper mapper, Optional<Pattern> brokerSubjects, Optional<TokenVerifier> tokens) {
        this.mapper = mapper;
        this.brokerSubjects = brokerSubjects;
        this.tokens = tokens;
    }

    @Override
    public Attributes transportReady(Attributes transport) {
        String host = host(transport.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
        Identity identity;
        try {
            identity = new Identity(certified(transport.get(Grpc.TRANSPORT_ATTR_SSL_SESSION), host)
                    .orElse(new Caller(Principal.ANONYMOUS, host, false)), Optional.empty());
        } catch (TidemarkException e) {
            identity = new Identity(new Caller(Principal.ANONYMOUS, host, false), Optional.of(e));
        }
        return transport.toBuilder().set(IDENTITY, identity).build();
    }

    private Optional<Caller> certified(SSLSession session, String host) {
        if (session == null) {
            return Optional.empty();
        }
        Certificate[] chain;
        try {
            chain = session.getPeerCertificates();
        } catch (SSLPeerUnverifiedException e) {
            return Optional.empty();
        }
        String subject = ((X509Certificate) chain[0]).getSubjectX500Principal().getName();
        boolean broker = brokerSubjects.map(p -> p.matcher(subject).matches()).orElse(false);
        return Optional.of(new Caller(mapper.map(subject), host, broker));
    }

    private static String host(SocketAddress remote) {
        return remote instanceof InetSocketAddress inet ? inet.getAddress().getHostAddress() : String.valueOf(remote);
    }

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                      ServerCallHandler<Q, A> next) {
        Identity identity = call.getAttributes().get(IDENTITY);
        if (identity == null) {
            throw new IllegalStateException("a call on a connection the authenticator did not see ready");
        }
        String authorization = headers.get(BearerToken.AUTHORIZATION);
        Caller caller = identity.caller();
        try {
            if (authorization != null) {
                caller = new Caller(tokenPrincipal(authorization), caller.host(), false);
            } else if (identity.refused().isPresent()) {
                throw identity.refused().get();
            }
        } catch (TidemarkException e) {
            return Refusal.close(call, e);
        }
        return Contexts.interceptCall(Context.current().withValue(Caller.KEY, caller), call, headers, next);
    }

    private Principal tokenPrincipal(String authorization) {
        if (tokens.isEmpty()) {
            throw new TidemarkException(ErrorCode.AUTHENTICATION_FAILED, "this broker takes no tokens ("
                    + TokenVerifier.PUBLIC_KEY_FILE + " is not set): connect with a client certificate");
        }
        if (!authorization.startsWith(BearerToken.SCHEME)) {
            throw new TidemarkException(ErrorCode.AUTHENTICATION_FAILED, "the authorization header is not '"
                    + BearerToken.SCHEME + "<token>'");
        }
        return tokens.get().verify(authorization.substring(BearerToken.SCHEME.length()));
    }
}
