package io.tidemark.proto.tls;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;

/**
 * Checks a peer's certificate by the side it is on: a client's against the CA only (the address a client connects
 * from names no one), a server's against the CA and the host name dialled. One manager for both sides, as a
 * transport that is server and client at once (Ratis') takes one.
 */
final class PeerTrustManager extends X509ExtendedTrustManager {
    private final X509ExtendedTrustManager clients;
    private final X509ExtendedTrustManager servers;

    /**
     * @param clients checks clients' certificates (the CA only)
     * @param servers checks servers' certificates (the CA and the host name)
     */
    PeerTrustManager(X509ExtendedTrustManager clients, X509ExtendedTrustManager servers) {
        this.clients = clients;
        this.servers = servers;
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        clients.checkClientTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        clients.checkClientTrusted(chain, authType, socket);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        clients.checkClientTrusted(chain, authType, engine);
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
