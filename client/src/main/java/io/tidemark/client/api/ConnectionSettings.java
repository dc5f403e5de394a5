package io.tidemark.client.api;

import io.grpc.ManagedChannel;
import io.tidemark.proto.auth.BearerToken;

import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * What every client needs to reach the cluster, taken from its config: the bootstrap addresses, the clock all
 * times are read from, how a channel to an address is made, the token every call carries, and the deadline of one
 * call.
 *
 * <p>Immutable.
 *
 * @param bootstrap        broker addresses ({@code host:port}), at least one
 * @param token            sent with every call when present ({@link BrokerChannels#get}); refused with the default
 *                         plain-text channels, as a token goes only over TLS
 * @param requestTimeoutMs deadline of one call to one broker, in ms
 */
record ConnectionSettings(List<String> bootstrap, Clock clock, Function<String, ManagedChannel> channelFactory,
                          Optional<BearerToken> token, long requestTimeoutMs) {
    /** Default of {@code request.timeout.ms}. */
    static final long DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
    /**
     * Upper bound of {@code request.timeout.ms}: one day. Long enough for any call; short enough that a deadline
     * added to a long poll's wait never overflows.
     */
    static final long MAX_REQUEST_TIMEOUT_MS = 86_400_000;

    ConnectionSettings {
        bootstrap = List.copyOf(bootstrap);
        ConfigChecks.notNull("clock", clock);
        ConfigChecks.notNull("channelFactory", channelFactory);
        if (token.isPresent() && channelFactory == BrokerChannels.PLAINTEXT) {
            throw new IllegalArgumentException("token is set but the channels are plain text: "
                    + BearerToken.PLAIN_TEXT_REFUSED + " (tls(TlsMaterial) on the builder)");
        }
        ConfigChecks.inRange("request.timeout.ms", requestTimeoutMs, 1, MAX_REQUEST_TIMEOUT_MS, "ms");
    }
}
