package io.tidemark.cli;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The TLS flags of one cluster a command reaches, as picocli mixins: the CA bundle, the client certificate chain and
 * its key, each over the matching key of that cluster's client properties file ({@link ClientOptions.TlsFlags}).
 * One mixin per flag prefix: {@code --tls-*} for the cluster a command talks to, {@code --source-tls-*} and
 * {@code --target-tls-*} for the mirror's two clusters.
 */
abstract sealed class TlsFlagOptions permits TlsFlagOptions.Own, TlsFlagOptions.Source, TlsFlagOptions.Target {
    /** The flags given, with the prefix errors name them by. */
    abstract ClientOptions.TlsFlags flags();

    /** {@code --tls-ca}, {@code --tls-cert}, {@code --tls-key}: the cluster the command talks to. */
    static final class Own extends TlsFlagOptions {
        @Option(names = "--tls-ca", paramLabel = "FILE", description = "The CA bundle (PEM) the brokers' "
                + "certificates chain to: speak TLS (tls.ca.file).")
        Path ca;
        @Option(names = "--tls-cert", paramLabel = "FILE", description = "This client's certificate chain, PEM "
                + "(tls.cert.file).")
        Path cert;
        @Option(names = "--tls-key", paramLabel = "FILE", description = "This client's private key, PEM, PKCS#8 "
                + "(tls.key.file).")
        Path key;

        @Override
        ClientOptions.TlsFlags flags() {
            return new ClientOptions.TlsFlags("--tls", ca, cert, key);
        }
    }

    /** {@code --source-tls-*}: the cluster a mirror copies from. */
    static final class Source extends TlsFlagOptions {
        @Option(names = "--source-tls-ca", paramLabel = "FILE", description = "The source's CA bundle, PEM "
                + "(tls.ca.file of --source-command-config): speak TLS to it.")
        Path ca;
        @Option(names = "--source-tls-cert", paramLabel = "FILE",
                description = "The mirror's certificate chain for the source, PEM (tls.cert.file).")
        Path cert;
        @Option(names = "--source-tls-key", paramLabel = "FILE",
                description = "The mirror's private key for the source, PEM, PKCS#8 (tls.key.file).")
        Path key;

        @Override
        ClientOptions.TlsFlags flags() {
            return new ClientOptions.TlsFlags("--source-tls", ca, cert, key);
        }
    }

    /** {@code --target-tls-*}: the cluster a mirror copies into, and whose mirror status is read. */
    static final class Target extends TlsFlagOptions {
        @Option(names = "--target-tls-ca", paramLabel = "FILE", description = "The target's CA bundle, PEM "
                + "(tls.ca.file of --target-command-config): speak TLS to it.")
        Path ca;
        @Option(names = "--target-tls-cert", paramLabel = "FILE",
                description = "This client's certificate chain for the target, PEM (tls.cert.file).")
        Path cert;
        @Option(names = "--target-tls-key", paramLabel = "FILE",
                description = "This client's private key for the target, PEM, PKCS#8 (tls.key.file).")
        Path key;

        @Override
        ClientOptions.TlsFlags flags() {
            return new ClientOptions.TlsFlags("--target-tls", ca, cert, key);
        }
    }
}
