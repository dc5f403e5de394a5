package io.tidemark.cli;

import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.util.IPAddress;
import org.bouncycastle.util.io.pem.PemObject;
import org.bouncycastle.util.io.pem.PemWriter;

import javax.security.auth.x500.X500Principal;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Date;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A throwaway certificate authority for trying TLS out: a self-signed CA that issues broker and client certificates
 * and writes them as the PEM files brokers and clients load with grpc-util ({@code
 * AdvancedTlsX509KeyManager.updateIdentityCredentials(certFile, keyFile)}, {@code AdvancedTlsX509TrustManager
 * .updateTrustCredentials(caFile)}, {@code CertificateUtils}):
 * <ul>
 *   <li>a certificate chain: the leaf, then the CA ({@link Issued#write});</li>
 *   <li>the leaf's private key, unencrypted PKCS#8 ({@code -----BEGIN PRIVATE KEY-----}), readable by its owner
 *       only (POSIX 0600) where the file system has POSIX permissions;</li>
 *   <li>the CA's certificate as the trust bundle, and its key beside it ({@link #write}, {@link #load}).</li>
 * </ul>
 * Production uses the organisation's CA instead, in the same layout. {@code tidemark certs create} drives this class;
 * tests use it for the certificates TLS must refuse: expired ones, ones from another CA, ones for another host.
 *
 * <p>Keys are EC P-256 (secp256r1), signed with SHA256withECDSA. grpc-util's {@code CertificateUtils.getPrivateKey}
 * reads a PKCS#8 key as RSA and then as EC, so both would load; P-256 is the smaller and faster of the two (a key
 * pair in about a millisecond where RSA 2048 takes tens to hundreds, a quicker handshake signature), and every TLS
 * stack a broker meets has it (the JDK's, BoringSSL in grpc-netty-shaded, OpenSSL). A CA {@linkplain #load loaded}
 * from files may hold an RSA key as well; it then signs with SHA256withRSA.
 *
 * <p>The CA: basicConstraints CA:true with path length 0 (it issues leaves only) and keyUsage keyCertSign and
 * cRLSign, both critical. A leaf: basicConstraints CA:false and keyUsage digitalSignature (critical), the
 * extendedKeyUsage of its {@link Usage}, its {@link AltNames} as subjectAltName, key identifiers linking it to the
 * CA. Serial numbers are 128 random bits with the top bit set, so every serial is positive and 16 bytes long.
 * BouncyCastle only builds and encodes certificates: the JDK's providers generate keys and sign, and none is
 * installed.
 *
 * <p>Immutable and safe to share between threads.
 */
public final class ThrowawayCertificateAuthority {
    /** The CA's certificate in a directory: also the trust bundle brokers and clients load. */
    public static final String CERTIFICATE_FILE = "ca.pem";
    /** The CA's private key in a directory. */
    public static final String KEY_FILE = "ca.key";

    private static final String EC_CURVE = "secp256r1";
    private static final int SERIAL_BITS = 128;
    /** A DNS label: letters, digits and hyphens, not at its ends, 63 characters at most (RFC 1035). */
    private static final String LABEL = "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
    /** A DNS name of one or more labels, which may start with a wildcard label. */
    private static final Pattern DNS_NAME = Pattern.compile("(\\*\\.)?" + LABEL + "(\\." + LABEL + ")*");
    private static final int DNS_NAME_LENGTH_MAX = 253;

    private final X509Certificate certificate;
    private final PrivateKey key;
    private final String signatureAlgorithm;
    private final SecureRandom random;

    private ThrowawayCertificateAuthority(X509Certificate certificate, PrivateKey key, String signatureAlgorithm,
                                          SecureRandom random) {
        this.certificate = certificate;
        this.key = key;
        this.signatureAlgorithm = signatureAlgorithm;
        this.random = random;
    }

    /** What a leaf certificate is for: its extendedKeyUsage. */
    public enum Usage {
        /** Brokers serve clients and other brokers, and call other brokers: serverAuth and clientAuth. */
        BROKER(KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth),
        /** Clients only call brokers: clientAuth. */
        CLIENT(KeyPurposeId.id_kp_clientAuth);

        private final KeyPurposeId[] purposes;

        Usage(KeyPurposeId... purposes) {
            this.purposes = purposes;
        }
    }

    /**
     * When a certificate is valid, both ends included, in whole seconds: what X.509 stores, so the certificate holds
     * exactly these instants (finer parts are dropped).
     */
    public record Validity(Instant notBefore, Instant notAfter) {
        public Validity {
            notBefore = notBefore.truncatedTo(ChronoUnit.SECONDS);
            notAfter = notAfter.truncatedTo(ChronoUnit.SECONDS);
            if (!notAfter.isAfter(notBefore)) {
                throw new IllegalArgumentException("a validity must end after it starts: " + notBefore + " to "
                        + notAfter);
            }
        }

        /** From {@code notBefore}, for {@code length}. */
        public static Validity from(Instant notBefore, Duration length) {
            return new Validity(notBefore, notBefore.plus(length));
        }
    }

    /** A leaf's subjectAltName: the DNS names and IP addresses (literals) it is valid for, in order, no repeats. */
    public record AltNames(List<String> dnsNames, List<String> ipAddresses) {
        public static final AltNames NONE = new AltNames(List.of(), List.of());

        public AltNames {
            dnsNames = List.copyOf(dnsNames);
            ipAddresses = List.copyOf(ipAddresses);
        }

        /**
         * The names of {@code hosts}: an IPv4 or IPv6 literal becomes an IP address, anything else a DNS name (which
         * is not looked up); a repeated host counts once.
         *
         * @throws IllegalArgumentException naming a host that is neither
         */
        public static AltNames of(Collection<String> hosts) {
            Set<String> dnsNames = new LinkedHashSet<>();
            Set<String> ipAddresses = new LinkedHashSet<>();
            for (String host : hosts) {
                if (IPAddress.isValid(host)) {
                    ipAddresses.add(host);
                } else if (host.length() <= DNS_NAME_LENGTH_MAX && DNS_NAME.matcher(host).matches()) {
                    dnsNames.add(host);
                } else {
                    throw new IllegalArgumentException("host '" + host + "' is neither an IP address nor a DNS name: "
                            + "give an IPv4 or IPv6 literal, or dot-separated labels of a-z A-Z 0-9 and - (the "
                            + "first may be *), " + DNS_NAME_LENGTH_MAX + " characters at most");
                }
            }
            return new AltNames(List.copyOf(dnsNames), List.copyOf(ipAddresses));
        }

        private GeneralNames generalNames() {
            List<GeneralName> names = new ArrayList<>();
            dnsNames.forEach(name -> names.add(new GeneralName(GeneralName.dNSName, name)));
            ipAddresses.forEach(address -> names.add(new GeneralName(GeneralName.iPAddress, address)));
            return new GeneralNames(names.toArray(GeneralName[]::new));
        }
    }

    /** A certificate this CA issued, its chain (the leaf, then the CA) and the leaf's private key. */
    public record Issued(List<X509Certificate> chain, PrivateKey key) {
        public Issued {
            chain = List.copyOf(chain);
        }

        /** The leaf. */
        public X509Certificate certificate() {
            return chain.get(0);
        }

        /**
         * Writes the chain to {@code certificateFile} and the key to {@code keyFile}, owner-only; both must not
         * exist.
         */
        public void write(Path certificateFile, Path keyFile) throws IOException {
            writeCertificates(certificateFile, chain);
            writeKey(keyFile, key);
        }
    }

    /** A new self-signed CA named {@code subject}, with a new key pair. */
    public static ThrowawayCertificateAuthority create(X500Principal subject, Validity validity, SecureRandom random) {
        KeyPair keyPair = newKeyPair(random);
        String signatureAlgorithm = signatureAlgorithm(keyPair.getPrivate());
        JcaX509ExtensionUtils extensions = extensionUtils();
        X509v3CertificateBuilder builder = builder(subject, subject, keyPair.getPublic(), validity, random);
        try {
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
                    .addExtension(Extension.subjectKeyIdentifier, false,
                            extensions.createSubjectKeyIdentifier(keyPair.getPublic()));
        } catch (CertIOException e) {
            throw new IllegalStateException("cannot encode the CA's extensions", e);
        }
        X509Certificate certificate = sign(builder, keyPair.getPrivate(), signatureAlgorithm);
        return new ThrowawayCertificateAuthority(certificate, keyPair.getPrivate(), signatureAlgorithm, random);
    }

    /**
     * The CA in {@code dir}: its certificate from {@value #CERTIFICATE_FILE}, its key from {@value #KEY_FILE}.
     *
     * @throws IllegalArgumentException naming the file that is not what a CA needs: one CA certificate, an
     *                                  unencrypted PKCS#8 EC or RSA key that belongs to it
     */
    public static ThrowawayCertificateAuthority load(Path dir, SecureRandom random) throws IOException {
        Path certificateFile = dir.resolve(CERTIFICATE_FILE);
        Path keyFile = dir.resolve(KEY_FILE);
        List<X509Certificate> certificates = readCertificates(certificateFile);
        if (certificates.size() != 1) {
            throw new IllegalArgumentException(certificateFile + " holds " + certificates.size() + " certificates: "
                    + "a CA's file holds exactly one, its own");
        }
        X509Certificate certificate = certificates.get(0);
        if (certificate.getBasicConstraints() < 0) {
            throw new IllegalArgumentException(certificateFile + " is not a CA certificate: "
                    + certificate.getSubjectX500Principal() + " has no basicConstraints CA:true");
        }
        PrivateKey key = readPrivateKey(keyFile);
        if (!key.getAlgorithm().equals("EC") && !key.getAlgorithm().equals("RSA")) {
            throw new IllegalArgumentException(keyFile + " holds a " + key.getAlgorithm() + " key: a CA's key is EC "
                    + "or RSA");
        }
        String signatureAlgorithm = signatureAlgorithm(key);
        if (!belongTogether(key, certificate.getPublicKey(), signatureAlgorithm, random)) {
            throw new IllegalArgumentException(keyFile + " is not the key of the certificate in " + certificateFile);
        }
        return new ThrowawayCertificateAuthority(certificate, key, signatureAlgorithm, random);
    }

    /** The CA's certificate. */
    public X509Certificate certificate() {
        return certificate;
    }

    /**
     * A new key pair and a certificate for it, signed by this CA.
     *
     * @throws IllegalArgumentException if the certificate would be valid after the CA expires
     */
    public Issued issue(X500Principal subject, Usage usage, AltNames altNames, Validity validity) {
        Instant caNotAfter = certificate.getNotAfter().toInstant();
        if (validity.notAfter().isAfter(caNotAfter)) {
            throw new IllegalArgumentException("a certificate valid until " + validity.notAfter() + " would outlive "
                    + "its CA, " + certificate.getSubjectX500Principal() + ", valid until " + caNotAfter
                    + ": issue it for a shorter time or from a newer CA");
        }
        KeyPair keyPair = newKeyPair(random);
        JcaX509ExtensionUtils extensions = extensionUtils();
        X509v3CertificateBuilder builder = builder(certificate.getSubjectX500Principal(), subject,
                keyPair.getPublic(), validity, random);
        try {
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
                    .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(usage.purposes))
                    .addExtension(Extension.subjectKeyIdentifier, false,
                            extensions.createSubjectKeyIdentifier(keyPair.getPublic()))
                    .addExtension(Extension.authorityKeyIdentifier, false,
                            extensions.createAuthorityKeyIdentifier(certificate));
            if (!altNames.equals(AltNames.NONE)) {
                builder.addExtension(Extension.subjectAlternativeName, false, altNames.generalNames());
            }
        } catch (CertIOException | CertificateException e) {
            throw new IllegalStateException("cannot encode the extensions of a certificate for " + subject, e);
        }
        X509Certificate leaf = sign(builder, key, signatureAlgorithm);
        return new Issued(List.of(leaf, certificate), keyPair.getPrivate());
    }

    /** Whether this CA's key signed {@code candidate}. */
    public boolean signed(X509Certificate candidate) {
        try {
            candidate.verify(certificate.getPublicKey());
            return true;
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    /**
     * Writes {@value #CERTIFICATE_FILE} and {@value #KEY_FILE} (owner-only) into {@code dir}; neither may exist.
     */
    public void write(Path dir) throws IOException {
        writeCertificates(dir.resolve(CERTIFICATE_FILE), List.of(certificate));
        writeKey(dir.resolve(KEY_FILE), key);
    }

    /**
     * The certificates of a PEM file, in order.
     *
     * @throws IllegalArgumentException naming the file if it holds something else
     */
    static List<X509Certificate> readCertificates(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            List<X509Certificate> certificates = new ArrayList<>();
            CertificateFactory.getInstance("X.509").generateCertificates(in)
                    .forEach(c -> certificates.add((X509Certificate) c));
            return certificates;
        } catch (CertificateException e) {
            throw new IllegalArgumentException(file + " is not a file of PEM certificates: " + e.getMessage(), e);
        }
    }

    private static PrivateKey readPrivateKey(Path file) throws IOException {
        // ISO-8859-1 decodes any bytes, so a damaged file is reported as not a key rather than as an I/O error.
        String text = Files.readString(file, StandardCharsets.ISO_8859_1);
        String notPkcs8 = file + " is not an unencrypted PKCS#8 private key (-----BEGIN PRIVATE KEY-----)";
        try (PEMParser parser = new PEMParser(new StringReader(text))) {
            if (parser.readObject() instanceof PrivateKeyInfo info) {
                return new JcaPEMKeyConverter().getPrivateKey(info);
            }
        } catch (IOException e) {
            throw new IllegalArgumentException(notPkcs8 + ": " + e.getMessage(), e);
        }
        throw new IllegalArgumentException(notPkcs8);
    }

    /** Whether {@code privateKey} signs what {@code publicKey} verifies: a random challenge. */
    private static boolean belongTogether(PrivateKey privateKey, PublicKey publicKey, String signatureAlgorithm,
                                          SecureRandom random) {
        byte[] challenge = new byte[32];
        random.nextBytes(challenge);
        try {
            Signature signer = Signature.getInstance(signatureAlgorithm);
            signer.initSign(privateKey, random);
            signer.update(challenge);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(signatureAlgorithm);
            verifier.initVerify(publicKey);
            verifier.update(challenge);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    private static KeyPair newKeyPair(SecureRandom random) {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec(EC_CURVE), random);
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JDK cannot generate " + EC_CURVE + " keys", e);
        }
    }

    /** The signature algorithm for a key: EC or RSA, the only ones {@link #load} accepts. */
    private static String signatureAlgorithm(PrivateKey key) {
        return key.getAlgorithm().equals("EC") ? "SHA256withECDSA" : "SHA256withRSA";
    }

    private static JcaX509ExtensionUtils extensionUtils() {
        try {
            return new JcaX509ExtensionUtils();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot compute key identifiers", e);
        }
    }

    private static X509v3CertificateBuilder builder(X500Principal issuer, X500Principal subject, PublicKey publicKey,
                                                    Validity validity, SecureRandom random) {
        BigInteger serial = new BigInteger(SERIAL_BITS - 1, random).setBit(SERIAL_BITS - 1);
        return new JcaX509v3CertificateBuilder(issuer, serial, Date.from(validity.notBefore()),
                Date.from(validity.notAfter()), subject, publicKey);
    }

    private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey key, String signatureAlgorithm) {
        try {
            return new JcaX509CertificateConverter().getCertificate(builder.build(
                    new JcaContentSignerBuilder(signatureAlgorithm).build(key)));
        } catch (OperatorCreationException | CertificateException e) {
            throw new IllegalStateException("cannot sign a certificate with " + signatureAlgorithm, e);
        }
    }

    private static void writeCertificates(Path file, List<X509Certificate> certificates) throws IOException {
        List<PemObject> pems = new ArrayList<>();
        for (X509Certificate c : certificates) {
            try {
                pems.add(new PemObject("CERTIFICATE", c.getEncoded()));
            } catch (CertificateException e) {
                throw new IllegalStateException("cannot encode " + c.getSubjectX500Principal(), e);
            }
        }
        writePem(file, pems, false);
    }

    /** A key as unencrypted PKCS#8, which {@code getEncoded} of the JDK's EC and RSA private keys is. */
    private static void writeKey(Path file, PrivateKey key) throws IOException {
        writePem(file, List.of(new PemObject("PRIVATE KEY", key.getEncoded())), true);
    }

    /** Writes {@code pems} to a new file ({@link NewFiles#create}), readable by its owner only if {@code secret}. */
    private static void writePem(Path file, List<PemObject> pems, boolean secret) throws IOException {
        StringWriter text = new StringWriter();
        try (PemWriter writer = new PemWriter(text)) {
            for (PemObject pem : pems) {
                writer.writeObject(pem);
            }
        }
        NewFiles.create(file, text.toString(), secret);
    }
}
