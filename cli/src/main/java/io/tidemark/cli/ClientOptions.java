package io.tidemark.cli;

import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.TidemarkAdmin;
import picocli.CommandLine.Option;

/** The options every client command shares: where the cluster is. */
final class ClientOptions {
    @Option(names = "--bootstrap", defaultValue = "127.0.0.1:9400",
            description = "Brokers to reach the cluster through, HOST:PORT[,HOST:PORT...] (default: ${DEFAULT-VALUE}).")
    String bootstrap;

    TidemarkAdmin admin() {
        return new TidemarkAdmin(AdminConfig.builder(bootstrap).build());
    }
}
