package io.tidemark.core.metrics;

import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.jmx.JmxReporter;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.instrumentation.dropwizard.DropwizardExports;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tidemark.core.config.HostPort;
import io.tidemark.proto.tls.TlsMaterial;

import java.io.Closeable;
import java.io.IOException;
import java.util.List;
import java.util.Optional;

/**
 * Exposes a process's {@link MetricRegistry}s (a broker's own and the one its Raft library fills): over JMX always
 * (domain {@code tidemark}), and in Prometheus text format at {@code http://HOST:PORT/metrics} when a metrics listener
 * is configured.
 */
public final class MetricsEndpoint implements Closeable {
    private final List<JmxReporter> jmx;
    private final HTTPServer http;

    private MetricsEndpoint(List<JmxReporter> jmx, HTTPServer http) {
        this.jmx = jmx;
        this.http = http;
    }

    /**
     * @param registries the registries to expose; their metrics' names are to be distinct
     * @param tls the process's TLS material: the Prometheus listener speaks HTTPS with it (its protocols, and client
     *            certificates as {@code tls.client.auth} says); empty for plain HTTP
     */
    public static MetricsEndpoint start(List<MetricRegistry> registries, Optional<HostPort> listen,
                                        Optional<TlsMaterial> tls) throws IOException {
        List<JmxReporter> jmx = registries.stream()
                .map(registry -> JmxReporter.forRegistry(registry).inDomain("tidemark").build()).toList();
        jmx.forEach(JmxReporter::start);
        HTTPServer http = null;
        if (listen.isPresent()) {
            PrometheusRegistry prometheus = new PrometheusRegistry();
            registries.forEach(registry -> DropwizardExports.builder().dropwizardRegistry(registry)
                    .register(prometheus));
            HTTPServer.Builder builder = HTTPServer.builder().hostname(listen.get().host()).port(listen.get().port())
                    .registry(prometheus);
            if (tls.isPresent()) {
                builder.httpsConfigurator(tls.get().httpsConfigurator());
            }
            http = builder.buildAndStart();
        }
        return new MetricsEndpoint(jmx, http);
    }

    /** The port of the Prometheus listener, when there is one. */
    public Optional<Integer> httpPort() {
        return http == null ? Optional.empty() : Optional.of(http.getPort());
    }

    @Override
    public void close() {
        jmx.forEach(JmxReporter::stop);
        if (http != null) {
            http.stop();
        }
    }
}
