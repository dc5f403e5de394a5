package io.tidemark.core.auth;

import io.tidemark.proto.v1.AclBinding;
import io.tidemark.proto.v1.AclOperation;
import io.tidemark.proto.v1.AclPatternType;
import io.tidemark.proto.v1.AclPermission;
import io.tidemark.proto.v1.AclResourceType;

import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The cluster's ACLs as of one metadata entry, indexed to answer "does this principal, from this host, have this
 * operation on this resource": immutable, read by any number of request threads while the next one is built.
 *
 * <p>The rules are Kafka's: a binding applies to a resource when its type is the resource's and its LITERAL name is
 * the resource's name or {@code *}, or its PREFIXED name starts the resource's name; to a principal when it names
 * it or {@code User:*}; to a host when it is the client's address or {@code *}; to an operation when it is the
 * operation or ALL, and for an ALLOW of READ, WRITE, DELETE or ALTER also to DESCRIBE. Of the bindings that apply,
 * a DENY wins over every ALLOW. When no binding at all names the resource (for any principal), the answer is
 * {@link Outcome#NO_ACL_FOUND}, which {@link Authorizer} settles by {@code allow.everyone.if.no.acl.found}.
 *
 * <p>One rule is Tidemark's own: an internal topic (a name starting with {@code __}, such as the mirror's
 * {@code __mirror_state}) is allowed only by a LITERAL binding of its own name, so a grant of every topic
 * ({@code *}) or of a prefix never hands out the mirror's checkpoints; DENYs of every kind apply to it.
 */
public final class AclIndex {
    /** How the bindings answer one question. */
    public enum Outcome { ALLOWED, DENIED, NO_ACL_ALLOWS, NO_ACL_FOUND }

    /** An answer, with the binding that decided it (an ALLOW or a DENY) when one did. */
    public record Match(Outcome outcome, Optional<AclBinding> binding) {
    }

    private static final Set<AclOperation> IMPLY_DESCRIBE = EnumSet.of(AclOperation.READ, AclOperation.WRITE,
            AclOperation.DELETE, AclOperation.ALTER);

    private static final String INTERNAL_PREFIX = "__";

    public static final AclIndex EMPTY = new AclIndex(List.of());

    private final List<AclBinding> bindings;
    /** LITERAL bindings by resource type and name ({@code *} included). */
    private final Map<AclResourceType, Map<String, List<AclBinding>>> literal = new HashMap<>();
    /** PREFIXED bindings by resource type. */
    private final Map<AclResourceType, List<AclBinding>> prefixed = new HashMap<>();

    /** @param bindings checked bindings ({@link AclBindingRules#checked}), each once */
    public AclIndex(Collection<AclBinding> bindings) {
        List<AclBinding> sorted = new ArrayList<>(bindings);
        sorted.sort(AclBindingRules.ORDER);
        this.bindings = List.copyOf(sorted);
        for (AclBinding binding : this.bindings) {
            if (binding.getPatternType() == AclPatternType.PREFIXED) {
                prefixed.computeIfAbsent(binding.getResourceType(), t -> new ArrayList<>()).add(binding);
            } else {
                literal.computeIfAbsent(binding.getResourceType(), t -> new HashMap<>())
                        .computeIfAbsent(binding.getResourceName(), n -> new ArrayList<>()).add(binding);
            }
        }
    }

    /** Every binding, in {@link AclBindingRules#ORDER}. */
    public List<AclBinding> bindings() {
        return bindings;
    }

    /** How the bindings answer whether {@code principal} from {@code host} may do {@code operation} on the resource. */
    public Match match(Principal principal, String host, AclOperation operation, AclResourceType type, String name) {
        List<AclBinding> named = named(type, name);
        if (named.isEmpty()) {
            return new Match(Outcome.NO_ACL_FOUND, Optional.empty());
        }
        String who = principal.toString();
        AclBinding allow = null;
        for (AclBinding binding : named) {
            if (!appliesTo(binding, who, host)) {
                continue;
            }
            if (binding.getPermission() == AclPermission.DENY && denies(binding.getOperation(), operation)) {
                return new Match(Outcome.DENIED, Optional.of(binding));
            }
            if (binding.getPermission() == AclPermission.ALLOW && allow == null
                    && allows(binding.getOperation(), operation) && grants(binding, type, name)) {
                allow = binding;
            }
        }
        return allow == null ? new Match(Outcome.NO_ACL_ALLOWS, Optional.empty())
                : new Match(Outcome.ALLOWED, Optional.of(allow));
    }

    /**
     * Whether some binding of the type allows {@code principal} from {@code host} the operation on some resource,
     * and no LITERAL {@code *} binding denies it on every one (Kafka's test for an idempotent producer without
     * IDEMPOTENT_WRITE: WRITE on any topic).
     */
    public boolean allowsSome(Principal principal, String host, AclOperation operation, AclResourceType type) {
        String who = principal.toString();
        for (AclBinding binding : literal.getOrDefault(type, Map.of()).getOrDefault(AclBindingRules.WILDCARD,
                List.of())) {
            if (binding.getPermission() == AclPermission.DENY && appliesTo(binding, who, host)
                    && denies(binding.getOperation(), operation)) {
                return false;
            }
        }
        return bindings.stream().anyMatch(binding -> binding.getResourceType() == type
                && binding.getPermission() == AclPermission.ALLOW && appliesTo(binding, who, host)
                && allows(binding.getOperation(), operation));
    }

    private List<AclBinding> named(AclResourceType type, String name) {
        List<AclBinding> named = new ArrayList<>();
        Map<String, List<AclBinding>> byName = literal.getOrDefault(type, Map.of());
        named.addAll(byName.getOrDefault(name, List.of()));
        if (!name.equals(AclBindingRules.WILDCARD)) {
            named.addAll(byName.getOrDefault(AclBindingRules.WILDCARD, List.of()));
        }
        for (AclBinding binding : prefixed.getOrDefault(type, List.of())) {
            if (name.startsWith(binding.getResourceName())) {
                named.add(binding);
            }
        }
        return named;
    }

    /** Whether an ALLOW may grant the resource: any, but an internal topic only by its own LITERAL name. */
    private static boolean grants(AclBinding allow, AclResourceType type, String name) {
        return type != AclResourceType.TOPIC || !name.startsWith(INTERNAL_PREFIX)
                || (allow.getPatternType() == AclPatternType.LITERAL && allow.getResourceName().equals(name));
    }

    private static boolean appliesTo(AclBinding binding, String principal, String host) {
        return (binding.getPrincipal().equals(principal) || binding.getPrincipal().equals("User:*"))
                && (binding.getHost().equals(AclBindingRules.WILDCARD) || binding.getHost().equals(host));
    }

    private static boolean denies(AclOperation bound, AclOperation asked) {
        return bound == AclOperation.ALL || bound == asked;
    }

    private static boolean allows(AclOperation bound, AclOperation asked) {
        return bound == AclOperation.ALL || bound == asked
                || (asked == AclOperation.DESCRIBE && IMPLY_DESCRIBE.contains(bound));
    }
}
