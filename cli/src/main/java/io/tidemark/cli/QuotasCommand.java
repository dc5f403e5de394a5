package io.tidemark.cli;

import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.core.auth.Principal;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ClientQuota;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code tidemark quotas set|remove|list}: principals' own produce and fetch byte rates through each broker, over the
 * brokers' defaults ({@code quota.produce.bytes.per.second}, {@code quota.fetch.bytes.per.second}), as Kafka's
 * {@code kafka-configs.sh --entity-type users --add-config producer_byte_rate=...} sets them; through AdminService
 * AlterClientQuotas and DescribeClientQuotas.
 */
@Command(name = "quotas", mixinStandardHelpOptions = true, description = "Set, remove and list principals' own "
        + "produce and fetch byte rates (bytes a second through each broker).",
        subcommands = {QuotasCommand.SetQuotas.class, QuotasCommand.Remove.class, QuotasCommand.ListQuotas.class})
final class QuotasCommand {
    private static final String ROW = "%-32s %-24s %s%n";

    private QuotasCommand() {
    }

    @Command(name = "set", mixinStandardHelpOptions = true, description = "Give a principal its own rates (a rate "
            + "not given is the broker's default; -1 is unlimited).")
    static final class SetQuotas implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--principal", required = true, paramLabel = "User:NAME")
        String principal;
        @Option(names = "--produce-bytes-per-second", paramLabel = "N", description = "Bytes a second the principal "
                + "may produce through each broker; -1: unlimited.")
        Long produce;
        @Option(names = "--fetch-bytes-per-second", paramLabel = "N", description = "Bytes a second the principal "
                + "may fetch through each broker; -1: unlimited.")
        Long fetch;

        @Override
        public Integer call() {
            ClientQuota quota = quota(spec, principal, produce, fetch);
            try (TidemarkAdmin admin = client.admin()) {
                admin.alterClientQuotas(List.of(quota));
            }
            print(spec.commandLine().getOut(), OutputFormat.text, List.of(quota));
            return 0;
        }
    }

    /**
     * The quota the flags give.
     *
     * @throws ParameterException for a principal not of the form User:NAME, no rate, or a rate below -1 or 0
     */
    static ClientQuota quota(CommandSpec spec, String principal, Long produce, Long fetch) {
        checkPrincipal(spec, principal);
        if (produce == null && fetch == null) {
            throw new ParameterException(spec.commandLine(), "give --produce-bytes-per-second, "
                    + "--fetch-bytes-per-second or both");
        }
        for (Long rate : new Long[] {produce, fetch}) {
            if (rate != null && (rate < -1 || rate == 0)) {
                throw new ParameterException(spec.commandLine(), "a rate of " + rate + " bytes a second; allowed: a "
                        + "positive number, or -1 for unlimited (tidemark quotas remove gives back the defaults)");
            }
        }
        return ClientQuota.newBuilder().setPrincipal(principal).setProduceBytesPerSecond(produce == null ? 0 : produce)
                .setFetchBytesPerSecond(fetch == null ? 0 : fetch).build();
    }

    /** @throws ParameterException for a principal not of the form TYPE:NAME */
    private static void checkPrincipal(CommandSpec spec, String principal) {
        try {
            Principal.parse(principal, "--principal");
        } catch (TidemarkException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    @Command(name = "remove", mixinStandardHelpOptions = true, description = "Remove a principal's own rates: the "
            + "brokers' defaults apply to it again.")
    static final class Remove implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--principal", required = true, paramLabel = "User:NAME")
        String principal;

        @Override
        public Integer call() {
            checkPrincipal(spec, principal);
            try (TidemarkAdmin admin = client.admin()) {
                admin.alterClientQuotas(List.of(ClientQuota.newBuilder().setPrincipal(principal).build()));
            }
            spec.commandLine().getOut().println("Removed the quotas of " + principal);
            return 0;
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "List principals' own rates.")
    static final class ListQuotas implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--principal", defaultValue = "", paramLabel = "User:NAME", description = "Only this one.")
        String principal;
        @Option(names = "--output", defaultValue = "text", description = "text or json.")
        OutputFormat output;

        @Override
        public Integer call() {
            try (TidemarkAdmin admin = client.admin()) {
                print(spec.commandLine().getOut(), output, admin.describeClientQuotas(principal));
            }
            return 0;
        }
    }

    /** Quotas as a table (none without quotas) or one json object a line; a rate of 0 reads "default". */
    static void print(PrintWriter out, OutputFormat output, List<ClientQuota> quotas) {
        if (output == OutputFormat.text && !quotas.isEmpty()) {
            out.printf(ROW, "PRINCIPAL", "PRODUCE-BYTES/S", "FETCH-BYTES/S");
        }
        for (ClientQuota quota : quotas) {
            if (output == OutputFormat.json) {
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("principal", quota.getPrincipal());
                row.put("produceBytesPerSecond", quota.getProduceBytesPerSecond());
                row.put("fetchBytesPerSecond", quota.getFetchBytesPerSecond());
                JsonLines.print(out, row);
            } else {
                out.printf(ROW, quota.getPrincipal(), rate(quota.getProduceBytesPerSecond()),
                        rate(quota.getFetchBytesPerSecond()));
            }
        }
    }

    private static String rate(long bytesPerSecond) {
        return bytesPerSecond == 0 ? "default" : bytesPerSecond == -1 ? "unlimited" : Long.toString(bytesPerSecond);
    }
}
