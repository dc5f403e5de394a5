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
import io.tidemark.proto.error.TidemarkException;

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
 */
public final class Authenticator extends ServerTransportFilter implements ServerInterceptor {
    private static final Attributes.Key<Identity> IDENTITY = Attributes.Key.create("tidemark-identity");

    /** What a connection's certificate says: a caller, or why it names none. */
    private record Identity(Caller caller, Optional<TidemarkException> refused) {
    }

    private final PrincipalMapper mapper;
    private final Optional<Pattern> brokerSubjects;

    /** @param brokerSubjects the subjects of brokers' certificates; empty in plain text */
    public Authenticator(PrincipalMapper mapper, Optional<Pattern> brokerSubjects) {
        this.mapper = mapper;
        this.brokerSubjects = brokerSubjects;
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
        if (identity.refused().isPresent()) {
            return Refusal.close(call, identity.refused().get());
        }
        return Contexts.interceptCall(Context.current().withValue(Caller.KEY, identity.caller()), call, headers,
                next);
    }
}
