package io.tidemark.proto.tls;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The tls.* keys of a broker's config file or a client's --command-config: what each allows and how a bad one reads. */
class TlsSettingsTest {
    @Test
    void withoutTlsKeysThePartyTalksPlainText() {
        assertEquals(Optional.empty(), TlsSettings.fromProperties(Map.of("cluster.name", "east"), "broker.properties"));
    }

    @Test
    void theDefaultsAreTls13ClientCertificatesRequiredAMinuteBetweenReloadsAndBrokersNamedBroker() {
        TlsSettings settings = TlsSettings.fromProperties(Map.of("tls.ca.file", "/c/ca.pem", "tls.cert.file",
                "/c/b.pem", "tls.key.file", "/c/b.key", "cluster.name", "east"), "f").orElseThrow();
        assertEquals(List.of(Path.of("/c/ca.pem"), Optional.of(Path.of("/c/b.pem")), Optional.of(Path.of("/c/b.key")),
                TlsSettings.ClientAuth.REQUIRED, List.of("TLSv1.3"), 60_000L, "CN=broker-[0-9]+"),
                List.of(settings.caFile(), settings.certFile(), settings.keyFile(), settings.clientAuth(),
                        settings.protocols(), settings.reloadIntervalMs(), settings.brokerSubjects().pattern()));
    }

    @Test
    void everyKeyReadsItsAllowedValues() {
        TlsSettings settings = TlsSettings.fromProperties(Map.of("tls.ca.file", "ca.pem", "tls.client.auth",
                "Requested", "tls.protocols", "TLSv1.3, TLSv1.2", "tls.reload.interval.ms", "1000"), "f").orElseThrow();
        assertEquals(List.of(TlsSettings.ClientAuth.REQUESTED, List.of("TLSv1.3", "TLSv1.2"), 1000L),
                List.of(settings.clientAuth(), settings.protocols(), settings.reloadIntervalMs()));
    }

    @Test
    void aBadValueIsRefusedNamingTheKeyTheValueAndWhatIsAllowed() {
        assertEquals("f sets tls.cert.file, tls.key.file but not tls.ca.file, the CA bundle that turns TLS on",
                refused(Map.of("tls.cert.file", "b.pem", "tls.key.file", "b.key")));
        assertEquals("tls.cert.file and tls.key.file go together: set both (a certificate and its key) or neither",
                refused(Map.of("tls.ca.file", "ca.pem", "tls.cert.file", "b.pem")));
        assertEquals("invalid value for tls.client.auth in f: 'maybe' is not allowed; allowed: required, requested, "
                + "none", refused(Map.of("tls.ca.file", "ca.pem", "tls.client.auth", "maybe")));
        assertEquals("invalid value for tls.protocols in f: 'TLSv1.2' leaves TLSv1.3 out; allowed: TLSv1.3, or "
                + "TLSv1.3,TLSv1.2", refused(Map.of("tls.ca.file", "ca.pem", "tls.protocols", "TLSv1.2")));
        assertEquals("invalid value for tls.protocols in f: 'TLSv1.3,TLSv1.1' is not allowed; allowed: TLSv1.3, or "
                + "TLSv1.3,TLSv1.2", refused(Map.of("tls.ca.file", "ca.pem", "tls.protocols", "TLSv1.3,TLSv1.1")));
        assertEquals("invalid value for tls.reload.interval.ms in f: '999' is not allowed; allowed: milliseconds, at "
                + "least 1000", refused(Map.of("tls.ca.file", "ca.pem", "tls.reload.interval.ms", "999")));
        assertEquals("invalid value for tls.broker.subjects in f: 'CN=(broker' is not allowed; allowed: a Java regular "
                + "expression matching whole certificate subjects, e.g. CN=broker-[0-9]+ (Unclosed group)",
                refused(Map.of("tls.ca.file", "ca.pem", "tls.broker.subjects", "CN=(broker")));
    }

    @Test
    void missingFilesAreNamedWhenTheMaterialLoads(@TempDir Path dir) {
        TidemarkException e = assertThrows(TidemarkException.class, () -> TlsMaterial.load(TlsSettings.client(
                dir.resolve("ca.pem"), Optional.empty(), Optional.empty())));
        assertEquals(ErrorCode.INVALID_CONFIG, e.code());
        assertEquals("tls.ca.file " + dir.resolve("ca.pem") + " is missing", e.getMessage());
    }

    private static String refused(Map<String, String> values) {
        TidemarkException e = assertThrows(TidemarkException.class, () -> TlsSettings.fromProperties(values, "f"));
        assertEquals(ErrorCode.INVALID_CONFIG, e.code());
        return e.getMessage();
    }
}
