package io.tidemark.proto.tls;

import io.grpc.netty.shaded.io.netty.handler.ssl.OpenSslCertificateException;
import io.grpc.netty.shaded.io.netty.internal.tcnative.CertificateVerifier;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.security.auth.x500.X500Principal;
import java.net.Socket;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Checks a peer's certificate by the side it is on: a client's against the CA only (the address a client connects
 * from names no one), a server's against the CA and the host name dialled. One manager for both sides, as a
 * transport that is server and client at once (Ratis') takes one.
 */
final class PeerTrustManager extends X509ExtendedTrustManager {
    /** Causes followed at most: a chain that loops back on itself must not hang the check. */
    private static final int MAX_CAUSE_DEPTH = 16;
    private final X509ExtendedTrustManager clients;
    private final X509ExtendedTrustManager servers;
    private final Optional<Pattern> clientSubjects;

    /**
     * @param clients        checks clients' certificates (the CA only)
     * @param servers        checks servers' certificates (the CA and the host name)
     * @param clientSubjects when present, the whole subject (RFC 2253) a client's certificate must have besides:
     *                       a server that takes brokers only
     */
    PeerTrustManager(X509ExtendedTrustManager clients, X509ExtendedTrustManager servers,
                     Optional<Pattern> clientSubjects) {
        this.clients = clients;
        this.servers = servers;
        this.clientSubjects = clientSubjects;
    }

    /** Refuses a client whose certificate's subject is not one {@code clientSubjects} takes. */
    private void checkSubject(X509Certificate[] chain) throws CertificateException {
        if (clientSubjects.isEmpty()) {
            return;
        }
        String subject = chain[0].getSubjectX500Principal().getName(X500Principal.RFC2253);
        if (!clientSubjects.get().matcher(subject).matches()) {
            throw new OpenSslCertificateException("this port takes brokers only: the certificate of " + subject
                    + " does not match " + TlsSettings.BROKER_SUBJECTS + " " + clientSubjects.get(),
                    CertificateVerifier.X509_V_ERR_CERT_REJECTED);
        }
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        checkClient(chain, () -> clients.checkClientTrusted(chain, authType));
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        checkClient(chain, () -> clients.checkClientTrusted(chain, authType, socket));
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        checkClient(chain, () -> clients.checkClientTrusted(chain, authType, engine));
    }

    /** A check of a client's certificate against the CA. */
    private interface CaCheck {
        void run() throws CertificateException;
    }

    /** Checks a client's certificate against the CA ({@code caCheck}), then its subject. */
    private void checkClient(X509Certificate[] chain, CaCheck caCheck) throws CertificateException {
        try {
            caCheck.run();
        } catch (CertificateException e) {
            throw withAlert(e);
        }
        checkSubject(chain);
    }

    /**
     * Why a client's certificate was refused, as the error Netty's OpenSSL engine turns into the matching TLS alert
     * (certificate_expired, unknown_ca); without it the client hears internal_error. The JDK's path validation
     * reports an expired certificate inside its refusal ({@link CertPathValidatorException} of reason EXPIRED).
     */
    private static CertificateException withAlert(CertificateException refused) {
        int error = CertificateVerifier.X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY;
        String why = "the client's certificate does not chain to tls.ca.file";
        Throwable cause = refused;
        for (int depth = 0; cause != null && depth < MAX_CAUSE_DEPTH; depth++, cause = cause.getCause()) {
            if (cause instanceof CertificateExpiredException || (cause instanceof CertPathValidatorException path
                    && path.getReason() == CertPathValidatorException.BasicReason.EXPIRED)) {
                error = CertificateVerifier.X509_V_ERR_CERT_HAS_EXPIRED;
                why = "the client's certificate has expired";
            } else if (cause instanceof CertificateNotYetValidException || (cause instanceof CertPathValidatorException
                    path && path.getReason() == CertPathValidatorException.BasicReason.NOT_YET_VALID)) {
                error = CertificateVerifier.X509_V_ERR_CERT_NOT_YET_VALID;
                why = "the client's certificate is not valid yet";
            }
        }
        return new OpenSslCertificateException(why + ": " + refused.getMessage(), refused, error);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        servers.checkServerTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        servers.checkServerTrusted(chain, authType, socket);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        servers.checkServerTrusted(chain, authType, engine);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return servers.getAcceptedIssuers();
    }
}
