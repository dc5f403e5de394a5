package io.tidemark.proto.tls;

import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.InternalProtocolNegotiator;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.AdvancedTlsX509TrustManager;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;

import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManager;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One party's TLS material loaded from its {@link TlsSettings}: its certificate and key, and the CA bundle its peers'
 * certificates must chain to, held by grpc-java's {@link AdvancedTlsX509KeyManager} and
 * {@link AdvancedTlsX509TrustManager} and loaded again within {@code tls.reload.interval.ms} of a change
 * ({@link FileReload}), so a rotated certificate or CA bundle is taken by the next handshake without a restart; a file
 * that does not load leaves the last good material in use. Gives the Netty contexts of gRPC servers and channels, and the JSSE managers Ratis' transport
 * takes.
 *
 * <p>As a client it checks the server's certificate against the CA and the host name it dialled (the certificate's
 * subject alternative names); as a server it checks a client's certificate against the CA only (a client's address
 * names no one): {@link PeerTrustManager}.
 *
 * <p>Thread-safe. {@link #close} stops the reloading.
 */
public final class TlsMaterial implements Closeable {
    private final TlsSettings settings;
    private final AdvancedTlsX509KeyManager keys = new AdvancedTlsX509KeyManager();
    private final AdvancedTlsX509TrustManager asServer;
    private final AdvancedTlsX509TrustManager asClient;
    private final PeerTrustManager peers;
    private final PeerTrustManager brokers;
    private final ScheduledExecutorService reloads;
    /** Made on first use and kept: its managers take the reloaded files. */
    private volatile SslContext clientContext;

    private TlsMaterial(TlsSettings settings) throws GeneralSecurityException {
        this.settings = settings;
        this.asServer = AdvancedTlsX509TrustManager.newBuilder()
                .setVerification(AdvancedTlsX509TrustManager.Verification.CERTIFICATE_ONLY_VERIFICATION).build();
        this.asClient = AdvancedTlsX509TrustManager.newBuilder()
                .setVerification(AdvancedTlsX509TrustManager.Verification.CERTIFICATE_AND_HOST_NAME_VERIFICATION)
                .build();
        this.peers = new PeerTrustManager(asServer, asClient, Optional.empty());
        this.brokers = new PeerTrustManager(asServer, asClient, Optional.of(settings.brokerSubjects()));
        this.reloads = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "tidemark-tls-reload");
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Reads the files, then keeps reading them again.
     *
     * @throws TidemarkException INVALID_CONFIG naming the file that is missing, unreadable or not what its key says
     */
    public static TlsMaterial load(TlsSettings settings) {
        TlsMaterial material;
        try {
            material = new TlsMaterial(settings);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK has no default trust manager", e);
        }
        try {
            readable(TlsSettings.CA_FILE, settings.caFile());
            Path ca = settings.caFile();
            material.watch(new FileReload("the CA bundle " + ca, List.of(ca), () -> {
                material.asServer.updateTrustCredentials(ca.toFile());
                material.asClient.updateTrustCredentials(ca.toFile());
            }));
            if (settings.certFile().isPresent()) {
                Path cert = readable(TlsSettings.CERT_FILE, settings.certFile().get());
                Path key = readable(TlsSettings.KEY_FILE, settings.keyFile().orElseThrow());
                material.watch(new FileReload("the certificate " + cert + " and key " + key, List.of(cert, key),
                        () -> material.keys.updateIdentityCredentials(cert.toFile(), key.toFile())));
            }
            return material;
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            material.close();
            if (e instanceof TidemarkException tidemark) {
                throw tidemark;
            }
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, "cannot load the TLS files (" + TlsSettings.CA_FILE
                    + " " + settings.caFile() + settings.certFile().map(c -> ", " + TlsSettings.CERT_FILE + " " + c)
                    .orElse("") + settings.keyFile().map(k -> ", " + TlsSettings.KEY_FILE + " " + k).orElse("")
                    + "): " + e + "; they take PEM: certificates, and a PKCS#8 private key");
        }
    }

    /** Whether this party has a certificate to show. */
    public boolean hasCertificate() {
        return settings.certFile().isPresent();
    }

    /** The context of a gRPC server: this party's certificate, clients' checked as {@code tls.client.auth} says. */
    public SslContext serverContext() {
        if (!hasCertificate()) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, "a TLS listener needs a certificate: set "
                    + TlsSettings.CERT_FILE + " and " + TlsSettings.KEY_FILE);
        }
        ClientAuth auth = switch (settings.clientAuth()) {
            case REQUIRED -> ClientAuth.REQUIRE;
            case REQUESTED -> ClientAuth.OPTIONAL;
            case NONE -> ClientAuth.NONE;
        };
        return build(GrpcSslContexts.configure(SslContextBuilder.forServer(keys)).trustManager(peers)
                .clientAuth(auth));
    }

    /** The context of a gRPC channel: the server checked against the CA and the host dialled; this certificate shown. */
    public SslContext clientContext() {
        SslContext context = clientContext;
        if (context == null) {
            context = newClientContext();
            clientContext = context;
        }
        return context;
    }

    private SslContext newClientContext() {
        SslContextBuilder builder = GrpcSslContexts.forClient().trustManager(peers);
        if (hasCertificate()) {
            builder.keyManager(keys);
        }
        return build(builder);
    }

    /**
     * The HTTPS settings of a JDK HTTP server (the metrics endpoint): this party's certificate, the protocols, and
     * clients' certificates as {@code tls.client.auth} says.
     */
    public HttpsConfigurator httpsConfigurator() {
        SSLContext context;
        try {
            context = SSLContext.getInstance("TLS");
            context.init(new KeyManager[] {keys}, new TrustManager[] {peers}, null);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK has no TLS", e);
        }
        return new HttpsConfigurator(context) {
            @Override
            public void configure(HttpsParameters params) {
                SSLParameters parameters = context.getDefaultSSLParameters();
                parameters.setProtocols(settings.protocols().toArray(String[]::new));
                parameters.setNeedClientAuth(settings.clientAuth() == TlsSettings.ClientAuth.REQUIRED);
                parameters.setWantClientAuth(settings.clientAuth() == TlsSettings.ClientAuth.REQUESTED);
                params.setSSLParameters(parameters);
            }
        };
    }

    /** This party's certificate and key, for Ratis' transport. */
    public KeyManager keyManager() {
        return keys;
    }

    /** Checks peers' certificates: a client's against the CA, a server's against the CA and the host name dialled. */
    public TrustManager trustManager() {
        return peers;
    }

    /**
     * Checks peers' certificates as {@link #trustManager} does, and takes brokers only as clients (their certificate's
     * subject matches {@code tls.broker.subjects}): for Ratis' transport, whose port no other party may reach.
     */
    public TrustManager brokerTrustManager() {
        return brokers;
    }

    private SslContext build(SslContextBuilder builder) {
        try {
            return builder.protocols(settings.protocols()).build();
        } catch (SSLException e) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, "cannot make a TLS context for "
                    + settings.protocols() + ": " + e.getMessage());
        }
    }

    private static Path readable(String key, Path file) {
        if (!Files.isReadable(file)) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, key + " " + file + " is "
                    + (Files.exists(file) ? "not readable by this process" : "missing"));
        }
        return file;
    }

    /** Runs {@code reload} every {@code tls.reload.interval.ms}. */
    private void watch(FileReload reload) {
        reloads.scheduleWithFixedDelay(reload, settings.reloadIntervalMs(), settings.reloadIntervalMs(),
                TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        reloads.shutdownNow();
    }

    /** The protocols and the files, for the broker's start line: what it serves with. */
    @Override
    public String toString() {
        return "TLS " + settings.protocols() + " (CA " + settings.caFile() + settings.certFile().map(c -> ", certificate "
                + c).orElse("") + ")";
    }

    /**
     * A gRPC server's TLS negotiation with {@link #serverContext}: a plain-text client is told TLS is required instead
     * of cut off ({@link TlsOnlyNegotiator}). For {@code NettyServerBuilder.protocolNegotiator}.
     */
    public InternalProtocolNegotiator.ProtocolNegotiator serverNegotiator() {
        return new TlsOnlyNegotiator(serverContext());
    }

    /** A channel to {@code target} ({@code host:port}): TLS with {@code tls}'s material, plain text without. */
    public static NettyChannelBuilder channelTo(String target, Optional<TlsMaterial> tls) {
        NettyChannelBuilder builder = NettyChannelBuilder.forTarget(target);
        return tls.isPresent() ? builder.sslContext(tls.get().clientContext()) : builder.usePlaintext();
    }

    /** Empty when {@code settings} is: a plain-text party. */
    public static Optional<TlsMaterial> load(Optional<TlsSettings> settings) {
        return settings.map(TlsMaterial::load);
    }
}
