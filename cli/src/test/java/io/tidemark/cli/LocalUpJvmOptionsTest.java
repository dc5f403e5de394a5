package io.tidemark.cli;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

class LocalUpJvmOptionsTest {
    @Test
    void unsetTheBrokersRunWithZgcAndABoundedHeap() {
        assertEquals(List.of("-XX:+UseZGC", "-Xmx2g"), LocalCommand.Up.brokerJvmOptions(Map.of()));
    }

    @Test
    void givenTheyReplaceTheDefaultsWhole() {
        assertEquals(List.of("-XX:+UseG1GC", "-Xmx4g", "-Xlog:gc:file=gc.log"), LocalCommand.Up.brokerJvmOptions(
                Map.of(LocalCommand.Up.BROKER_JAVA_OPTS, "  -XX:+UseG1GC   -Xmx4g -Xlog:gc:file=gc.log ")));
    }

    @Test
    void emptyTheBrokersRunWithTheJvmsOwnDefaults() {
        assertEquals(List.of(), LocalCommand.Up.brokerJvmOptions(Map.of(LocalCommand.Up.BROKER_JAVA_OPTS, " ")));
    }
}
