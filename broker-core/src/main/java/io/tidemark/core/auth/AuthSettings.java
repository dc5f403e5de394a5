package io.tidemark.core.auth;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A broker's keys for naming callers and deciding what they may do:
 * <ul>
 *   <li>{@code authorizer.enabled} (true | false): whether ACLs are enforced; by default true when the broker speaks
 *       TLS (it can then tell callers apart) and false in plain text, where every caller is
 *       {@link Principal#ANONYMOUS};</li>
 *   <li>{@code super.users}: principals allowed every operation but the brokers' CLUSTER_ACTION, separated by
 *       {@code ;} (Kafka's form): {@code User:admin;User:ops}; none by default;</li>
 *   <li>{@code allow.everyone.if.no.acl.found} (true | false, default false): whether a resource no ACL names is
 *       open to everyone;</li>
 *   <li>{@code tls.principal.mapping.rules}: how a client certificate's subject becomes a principal's name
 *       ({@link PrincipalMapper}, Kafka's {@code ssl.principal.mapping.rules}); {@code DEFAULT}, the whole subject,
 *       by default;</li>
 *   <li>{@code auth.token.public.key.file}: the public key tokens are checked with ({@link TokenVerifier}); without
 *       it the broker takes no tokens; {@code auth.token.audience}: the audience a token must name, when set.</li>
 * </ul>
 *
 * @param brokersByCertificate whether brokers are told from clients by their certificates (the broker speaks TLS):
 *                             then only brokers may call the brokers' internal services; in plain text nobody can be
 *                             told apart, and those services answer every caller
 */
public record AuthSettings(boolean authorizerEnabled, Set<Principal> superUsers, boolean allowEveryoneIfNoAclFound,
                           PrincipalMapper mapper, boolean brokersByCertificate, Optional<Path> tokenPublicKey,
                           Optional<String> tokenAudience) {
    public static final String AUTHORIZER_ENABLED = "authorizer.enabled";
    public static final String SUPER_USERS = "super.users";
    public static final String ALLOW_EVERYONE_IF_NO_ACL_FOUND = "allow.everyone.if.no.acl.found";
    public static final String MAPPING_RULES = PrincipalMapper.PRINCIPAL_MAPPING_RULES;
    public static final Set<String> KEYS = Set.of(AUTHORIZER_ENABLED, SUPER_USERS, ALLOW_EVERYONE_IF_NO_ACL_FOUND,
            MAPPING_RULES, TokenVerifier.PUBLIC_KEY_FILE, TokenVerifier.AUDIENCE);

    public AuthSettings {
        superUsers = Set.copyOf(superUsers);
    }

    /**
     * The settings a broker's config file gives.
     *
     * @param tls whether the broker speaks TLS (the authorizer's default, and whether brokers are known by their
     *            certificates)
     * @throws TidemarkException INVALID_CONFIG naming the key, the value and what is allowed
     */
    public static AuthSettings fromProperties(Map<String, String> file, String source, boolean tls) {
        return new AuthSettings(flag(file, AUTHORIZER_ENABLED, tls, source), superUsers(file.getOrDefault(SUPER_USERS,
                ""), source), flag(file, ALLOW_EVERYONE_IF_NO_ACL_FOUND, false, source),
                PrincipalMapper.parse(file.getOrDefault(MAPPING_RULES,
                PrincipalMapper.DEFAULT_PRINCIPAL_MAPPING_RULES)), tls,
                Optional.ofNullable(file.get(TokenVerifier.PUBLIC_KEY_FILE)).map(Path::of),
                Optional.ofNullable(file.get(TokenVerifier.AUDIENCE)));
    }

    private static boolean flag(Map<String, String> file, String key, boolean byDefault, String source) {
        String value = file.get(key);
        if (value == null) {
            return byDefault;
        }
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new TidemarkException(ErrorCode.INVALID_CONFIG, "invalid value for " + key + " in "
                    + source + ": '" + value + "' is not allowed; allowed: true, false");
        };
    }

    private static Set<Principal> superUsers(String value, String source) {
        try {
            return Arrays.stream(value.split(";")).map(String::trim).filter(s -> !s.isEmpty())
                    .map(s -> Principal.parse(s, SUPER_USERS + " in " + source)).collect(Collectors.toSet());
        } catch (TidemarkException e) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, e.getMessage() + "; principals are separated by ;");
        }
    }
}
