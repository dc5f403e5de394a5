package io.tidemark.client.api;

import io.grpc.ManagedChannel;
import io.tidemark.proto.auth.BearerToken;
import io.tidemark.proto.tls.TlsMaterial;

import java.time.Clock;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * Settings of a {@link TidemarkAdmin}, made with {@link #builder(String)} and checked by {@link Builder#build()}.
 *
 * <table>
 *   <caption>Settings</caption>
 *   <tr><th>key</th><th>unit</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>bootstrap</td><td>host:port,...</td><td>(required)</td><td>brokers the calls go to, in turn until
 *       one answers</td></tr>
 *   <tr><td>request.timeout.ms</td><td>ms</td><td>30000</td><td>deadline of one call to one broker</td></tr>
 * </table>
 * The channel factory (default: plaintext netty, messages up to 64 MiB) makes the channel to a
 * {@code host:port}; tests pass in-process channels. A token ({@link Builder#token}) goes with every call, over TLS
 * only.
 *
 * <p>Immutable.
 */
public final class AdminConfig {
    private final ConnectionSettings connection;

    private AdminConfig(Builder b) {
        this(new ConnectionSettings(ConfigChecks.bootstrap(b.bootstrap), Clock.systemUTC(), b.channelFactory,
                Optional.ofNullable(b.token), b.requestTimeoutMs));
    }

    private AdminConfig(ConnectionSettings connection) {
        this.connection = connection;
    }

    /** An admin that reaches the cluster as another client of it does: same brokers, channels, token and timeout. */
    static AdminConfig of(ConnectionSettings connection) {
        return new AdminConfig(connection);
    }

    /** A builder with every setting at its default; {@code bootstrap} is a comma-separated host:port list. */
    public static Builder builder(String bootstrap) {
        return new Builder(bootstrap);
    }

    ConnectionSettings connection() {
        return connection;
    }

    public long requestTimeoutMs() {
        return connection.requestTimeoutMs();
    }

    /** Builds an {@link AdminConfig}; not thread-safe. Values are checked by {@link #build()}. */
    public static final class Builder {
        private final String bootstrap;
        private Function<String, ManagedChannel> channelFactory = BrokerChannels.PLAINTEXT;
        private BearerToken token;
        private long requestTimeoutMs = ConnectionSettings.DEFAULT_REQUEST_TIMEOUT_MS;

        private Builder(String bootstrap) {
            this.bootstrap = bootstrap;
        }

        /** Makes the channel to a broker's {@code host:port}. Default: plaintext netty, messages up to 64 MiB. */
        public Builder channelFactory(Function<String, ManagedChannel> channelFactory) {
            this.channelFactory = channelFactory;
            return this;
        }

        /**
         * Speaks TLS to the brokers with {@code tls}'s certificates (the caller closes it after the client): the
         * default channels, in TLS. Replaces {@link #channelFactory}.
         */
        public Builder tls(TlsMaterial tls) {
            this.channelFactory = BrokerChannels.tls(tls);
            return this;
        }

        /**
         * Sends {@code token} with every call ({@code authorization: Bearer <token>}), for brokers that take tokens
         * instead of client certificates. Needs TLS ({@link #tls}, or a {@link #channelFactory} of TLS channels): with
         * the default plain-text channels {@link #build()} refuses it, and a call on another plain-text channel fails
         * with AUTHENTICATION_FAILED without sending it.
         */
        public Builder token(BearerToken token) {
            this.token = Objects.requireNonNull(token, "token");
            return this;
        }

        /** {@code request.timeout.ms}: deadline of one call to one broker, ms, 1..86400000. Default 30000. */
        public Builder requestTimeoutMs(long requestTimeoutMs) {
            this.requestTimeoutMs = requestTimeoutMs;
            return this;
        }

        /** @throws IllegalArgumentException naming the first setting whose value is not allowed */
        public AdminConfig build() {
            return new AdminConfig(this);
        }
    }
}
