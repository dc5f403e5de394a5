package io.tidemark.proto.fuzz;

import java.util.HexFormat;

/** Bytes as hex for a finding's report, cut to a readable length. */
public final class Hex {
    private Hex() {
    }

    /** The first {@code maxBytes} of {@code bytes} in hex, and how many more there are when cut. */
    public static String of(byte[] bytes, int maxBytes) {
        String hex = HexFormat.of().formatHex(bytes, 0, Math.min(bytes.length, maxBytes));
        return bytes.length <= maxBytes ? hex : hex + "... (" + (bytes.length - maxBytes) + " more bytes)";
    }
}
