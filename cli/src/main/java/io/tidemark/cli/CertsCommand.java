package io.tidemark.cli;

import io.tidemark.cli.ThrowawayCertificateAuthority.AltNames;
import io.tidemark.cli.ThrowawayCertificateAuthority.Issued;
import io.tidemark.cli.ThrowawayCertificateAuthority.Usage;
import io.tidemark.cli.ThrowawayCertificateAuthority.Validity;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import javax.security.auth.x500.X500Principal;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;

/** {@code tidemark certs create}: certificates to try TLS out with. */
@Command(name = "certs", mixinStandardHelpOptions = true, description = "Make certificates to try TLS out with.",
        subcommands = CertsCommand.Create.class)
final class CertsCommand {
    private CertsCommand() {
    }

    /**
     * Writes a {@link ThrowawayCertificateAuthority} and what it issues into a directory: {@code ca.pem} and {@code
     * ca.key}, {@code broker-N.pem} and {@code .key} per node, {@code NAME.pem}, {@code .key} and {@code .properties}
     * per client. A file that exists is left alone, so a second run adds what is missing; a certificate without its
     * key (or a key without its certificate) is refused, since a new pair would not match the file kept.
     */
    @Command(name = "create", mixinStandardHelpOptions = true, description = {
            "Make a throwaway CA for trying TLS out, and certificates from it. It writes into --dir: ca.pem and "
                    + "ca.key (a new CA unless both exist, which then issues the certificates); per node "
                    + "broker-N.pem and broker-N.key (CN=broker-N, serverAuth and clientAuth, for localhost, "
                    + "127.0.0.1 and --hosts); per client NAME.pem, NAME.key (CN=NAME, clientAuth) and "
                    + "NAME.properties, the file to give the tools as --command-config.",
            "Files that exist are left alone, so running it again adds what is missing.",
            "Production uses the organisation's CA instead, with certificates in the same layout: a chain PEM (the "
                    + "certificate, then its CA's), an unencrypted PKCS#8 key PEM (-----BEGIN PRIVATE KEY-----) and "
                    + "a CA bundle PEM."})
    static final class Create implements Callable<Integer> {
        private static final int NODES_MAX = 100;
        private static final int DAYS_MAX = 3650;
        /**
         * A new CA's lifetime: the longest --days, so that certificates issued from it on later runs fit in it for
         * years; one that would outlive it is refused ({@link ThrowawayCertificateAuthority#issue}).
         */
        private static final Duration CA_LIFETIME = Duration.ofDays(DAYS_MAX);
        private static final String CA_NAME = "CN=Tidemark throwaway CA";
        /** Every broker certificate is for these, so brokers and tools on one machine reach each other. */
        private static final List<String> LOCAL_HOSTS = List.of("localhost", "127.0.0.1");
        /** As cluster.name's: safe in a file name. */
        private static final Pattern CLIENT_NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");
        /** Names of the CA's and the brokers' files, which a client's would overwrite. */
        private static final Pattern RESERVED_NAME = Pattern.compile("ca|broker-[0-9]+");

        @Spec
        CommandSpec spec;
        @Option(names = "--dir", required = true, paramLabel = "DIR",
                description = "Where the files go; created if missing.")
        Path dir;
        @Option(names = "--nodes", required = true, paramLabel = "N",
                description = "Brokers to make certificates for: broker-1 to broker-N (1 to " + NODES_MAX + ").")
        int nodes;
        @Option(names = "--clients", required = true, split = ",", paramLabel = "NAME",
                description = "Clients to make certificates for: 1 to 64 characters from a-z A-Z 0-9 . _ -, "
                        + "not ca or broker-<n>.")
        List<String> clients;
        @Option(names = "--hosts", split = ",", paramLabel = "HOST",
                description = "More names the brokers are reached by: an IP literal becomes an IP address SAN, "
                        + "anything else a DNS name SAN.")
        List<String> hosts = List.of();
        @Option(names = "--days", defaultValue = "365", paramLabel = "DAYS",
                description = "How long new certificates are valid, from now (1 to " + DAYS_MAX + ", default: "
                        + "${DEFAULT-VALUE}); a new CA is valid for " + DAYS_MAX + " days.")
        int days;

        private final InstantSource clock;
        private final SecureRandom random;

        Create() {
            this(Clock.systemUTC(), new SecureRandom());
        }

        Create(InstantSource clock, SecureRandom random) {
            this.clock = clock;
            this.random = random;
        }

        @Override
        public Integer call() throws IOException {
            if (nodes < 1 || nodes > NODES_MAX) {
                throw new IllegalArgumentException("--nodes " + nodes + " is not allowed: 1 to " + NODES_MAX);
            }
            if (days < 1 || days > DAYS_MAX) {
                throw new IllegalArgumentException("--days " + days + " is not allowed: 1 to " + DAYS_MAX);
            }
            requireClientNames(clients);
            List<String> brokerHosts = new ArrayList<>(LOCAL_HOSTS);
            brokerHosts.addAll(hosts);
            AltNames brokerNames = AltNames.of(brokerHosts);

            PrintWriter out = spec.commandLine().getOut();
            Path directory = Files.createDirectories(dir.toAbsolutePath().normalize());
            Instant now = clock.instant();
            ThrowawayCertificateAuthority ca = certificateAuthority(directory, now, out);
            Validity validity = Validity.from(now, Duration.ofDays(days));
            for (int node = 1; node <= nodes; node++) {
                issueIfMissing(ca, directory, "broker-" + node, Usage.BROKER, brokerNames, validity, out);
            }
            for (String client : clients) {
                issueIfMissing(ca, directory, client, Usage.CLIENT, AltNames.NONE, validity, out);
                writeCommandConfigIfMissing(directory, client, out);
            }
            return 0;
        }

        private static void requireClientNames(List<String> names) {
            Set<String> seen = new HashSet<>();
            for (String name : names) {
                if (!CLIENT_NAME.matcher(name).matches() || RESERVED_NAME.matcher(name).matches()) {
                    throw new IllegalArgumentException("client name '" + name + "' is not allowed: 1 to 64 "
                            + "characters from a-z A-Z 0-9 . _ -, other than ca and broker-<n> (the CA's and the "
                            + "brokers' files)");
                }
                if (!seen.add(name)) {
                    throw new IllegalArgumentException("--clients names '" + name + "' twice");
                }
            }
        }

        /** The CA in {@code directory} if its two files exist, else a new one written there. */
        private ThrowawayCertificateAuthority certificateAuthority(Path directory, Instant now, PrintWriter out)
                throws IOException {
            Path certificateFile = directory.resolve(ThrowawayCertificateAuthority.CERTIFICATE_FILE);
            Path keyFile = directory.resolve(ThrowawayCertificateAuthority.KEY_FILE);
            if (pairExists(certificateFile, keyFile)) {
                ThrowawayCertificateAuthority ca = ThrowawayCertificateAuthority.load(directory, random);
                out.println("exists " + certificateFile + " (left alone; " + ca.certificate().getSubjectX500Principal()
                        + " issues the certificates below)");
                out.println("exists " + keyFile + " (left alone)");
                return ca;
            }
            ThrowawayCertificateAuthority ca = ThrowawayCertificateAuthority.create(new X500Principal(CA_NAME),
                    Validity.from(now, CA_LIFETIME), random);
            ca.write(directory);
            out.println("wrote  " + certificateFile + " (CA " + ca.certificate().getSubjectX500Principal()
                    + ", valid until " + ca.certificate().getNotAfter().toInstant() + ")");
            out.println("wrote  " + keyFile);
            return ca;
        }

        private static void issueIfMissing(ThrowawayCertificateAuthority ca, Path directory, String name, Usage usage,
                                           AltNames altNames, Validity validity, PrintWriter out) throws IOException {
            Path certificateFile = directory.resolve(name + ".pem");
            Path keyFile = directory.resolve(name + ".key");
            if (pairExists(certificateFile, keyFile)) {
                List<X509Certificate> kept = ThrowawayCertificateAuthority.readCertificates(certificateFile);
                boolean ours = !kept.isEmpty() && ca.signed(kept.get(0));
                out.println("exists " + certificateFile + " (left alone" + (ours ? ")" : "; NOT issued by "
                        + ThrowawayCertificateAuthority.CERTIFICATE_FILE + ": delete it and " + keyFile.getFileName()
                        + " to issue a new one)"));
                out.println("exists " + keyFile + " (left alone)");
                return;
            }
            Issued issued = ca.issue(new X500Principal("CN=" + name), usage, altNames, validity);
            issued.write(certificateFile, keyFile);
            out.println("wrote  " + certificateFile + " (" + issued.certificate().getSubjectX500Principal()
                    + describe(altNames) + ", valid until " + validity.notAfter() + ")");
            out.println("wrote  " + keyFile);
        }

        private static String describe(AltNames altNames) {
            List<String> names = new ArrayList<>(altNames.dnsNames());
            names.addAll(altNames.ipAddresses());
            return names.isEmpty() ? "" : " for " + String.join(", ", names);
        }

        /**
         * Whether both files exist. Neither is false; one alone is refused, as a new pair would not match the file
         * kept.
         */
        private static boolean pairExists(Path certificateFile, Path keyFile) {
            boolean certificateExists = Files.exists(certificateFile);
            if (certificateExists != Files.exists(keyFile)) {
                Path present = certificateExists ? certificateFile : keyFile;
                Path missing = certificateExists ? keyFile : certificateFile;
                throw new IllegalArgumentException(present + " exists without " + missing + ": restore "
                        + missing.getFileName() + ", or delete " + present.getFileName() + " to make a new pair");
            }
            return certificateExists;
        }

        /**
         * {@code NAME.properties}: where the client's TLS files are, as the tools read it with {@code
         * --command-config}. A backslash (a Windows path's) is escaped, as the properties format needs.
         */
        private static void writeCommandConfigIfMissing(Path directory, String client, PrintWriter out)
                throws IOException {
            Path file = directory.resolve(client + ".properties");
            if (Files.exists(file)) {
                out.println("exists " + file + " (left alone)");
                return;
            }
            String text = "tls.ca.file=" + escape(directory.resolve(ThrowawayCertificateAuthority.CERTIFICATE_FILE))
                    + "\ntls.cert.file=" + escape(directory.resolve(client + ".pem"))
                    + "\ntls.key.file=" + escape(directory.resolve(client + ".key")) + "\n";
            Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE);
            out.println("wrote  " + file + " (--command-config for " + client + ")");
        }

        private static String escape(Path path) {
            return path.toString().replace("\\", "\\\\");
        }
    }
}
