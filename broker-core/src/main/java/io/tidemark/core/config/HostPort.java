package io.tidemark.core.config;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

/** A listen or connect address, {@code host:port}; port 0 asks the OS for a free one. */
public record HostPort(String host, int port) {
    public static HostPort parse(String what, String text) {
        int colon = text == null ? -1 : text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw invalid(what, text);
        }
        try {
            int port = Integer.parseInt(text.substring(colon + 1));
            if (port < 0 || port > 65535) {
                throw invalid(what, text);
            }
            return new HostPort(text.substring(0, colon), port);
        } catch (NumberFormatException e) {
            throw invalid(what, text);
        }
    }

    private static TidemarkException invalid(String what, String text) {
        return new TidemarkException(ErrorCode.INVALID_CONFIG, "invalid value for " + what + ": '" + text
                + "'; allowed: HOST:PORT with a port from 0 to 65535, e.g. 127.0.0.1:9092");
    }

    @Override
    public String toString() {
        return host + ":" + port;
    }
}
