package io.tidemark.cli;

import io.tidemark.proto.record.Header;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.ProvenanceHeaders;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Headers as {@code consume --output json} prints them. */
class JsonLinesTest {
    @Test
    void theProvenanceHeaderPrintsAsAnObjectOfItsFields() {
        List<Header> headers = ProvenanceHeaders.forCopy(List.of(new Header("h", "x".getBytes(UTF_8))),
                new OriginPartition("B", "orders", new UUID(0, 1), 3), 41, 1_700_000_000_000L);
        List<Header> copiedOn = ProvenanceHeaders.forCopy(headers, new OriginPartition("C", "B.orders",
                UUID.fromString("0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95"), 0), 7, 1_700_000_000_005L);
        StringWriter out = new StringWriter();
        JsonLines.print(new PrintWriter(out, true), Map.of("headers", JsonLines.headers(copiedOn)));
        assertEquals("{\"headers\":{\"h\":\"x\",\"tidemark.origin\":{\"cluster\":\"C\",\"topic\":\"B.orders\","
                + "\"topicId\":\"0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95\",\"partition\":0,\"offset\":7,\"receiveTime\":1700000000005,\"path\":[\"B\",\"C\"]}}}\n",
                out.toString());
    }

    @Test
    void aMalformedProvenanceHeaderPrintsWhyAndItsBytes() {
        StringWriter out = new StringWriter();
        JsonLines.print(new PrintWriter(out, true), Map.of("headers",
                JsonLines.headers(List.of(new Header(ProvenanceHeaders.NAME, new byte[] {2, 1, 'A'})))));
        assertEquals("{\"headers\":{\"tidemark.origin\":\"malformed tidemark.origin value (3 bytes): origin topic: "
                + "varint runs past the value end; bytes 020141\"}}\n", out.toString());
    }
}
