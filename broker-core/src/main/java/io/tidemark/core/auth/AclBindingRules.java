package io.tidemark.core.auth;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.AclBinding;
import io.tidemark.proto.v1.AclFilter;
import io.tidemark.proto.v1.AclOperation;
import io.tidemark.proto.v1.AclPatternType;
import io.tidemark.proto.v1.AclPermission;
import io.tidemark.proto.v1.AclResourceType;
import io.tidemark.proto.v1.ErrorCode;

import java.util.Comparator;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import static io.tidemark.proto.v1.AclOperation.ALL;
import static io.tidemark.proto.v1.AclOperation.ALTER;
import static io.tidemark.proto.v1.AclOperation.CREATE;
import static io.tidemark.proto.v1.AclOperation.DELETE;
import static io.tidemark.proto.v1.AclOperation.DESCRIBE;
import static io.tidemark.proto.v1.AclOperation.IDEMPOTENT_WRITE;
import static io.tidemark.proto.v1.AclOperation.READ;
import static io.tidemark.proto.v1.AclOperation.WRITE;

/**
 * What an ACL binding may be, how bindings are ordered and which a filter matches; stateless.
 *
 * <p>A binding names a resource type, a resource name (the cluster's one resource is {@value #CLUSTER_RESOURCE}),
 * a pattern (LITERAL, where the name {@code *} is every resource of the type, or PREFIXED), a principal
 * {@code User:NAME} or {@code User:*}, a host ({@code *} or an IP address; empty is taken as {@code *}), an operation
 * that the resource type has (below) and a permission. CLUSTER_ACTION is never granted: brokers hold it by their
 * certificates.
 * <table>
 *   <caption>Operations per resource type (ALL on every one)</caption>
 *   <tr><td>TOPIC</td><td>READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE</td></tr>
 *   <tr><td>GROUP</td><td>READ, DELETE, DESCRIBE</td></tr>
 *   <tr><td>CLUSTER</td><td>CREATE, ALTER, DESCRIBE, IDEMPOTENT_WRITE</td></tr>
 *   <tr><td>TRANSACTIONAL_ID</td><td>WRITE, DESCRIBE</td></tr>
 * </table>
 */
public final class AclBindingRules {
    /** The name of the cluster resource. */
    public static final String CLUSTER_RESOURCE = "tidemark-cluster";
    /** A LITERAL name, or a host, that matches every one. */
    public static final String WILDCARD = "*";
    /** Bindings in the order DescribeAcls answers them. */
    public static final Comparator<AclBinding> ORDER = Comparator
            .comparingInt(AclBinding::getResourceTypeValue)
            .thenComparing(AclBinding::getResourceName)
            .thenComparingInt(AclBinding::getPatternTypeValue)
            .thenComparing(AclBinding::getPrincipal)
            .thenComparing(AclBinding::getHost)
            .thenComparingInt(AclBinding::getOperationValue)
            .thenComparingInt(AclBinding::getPermissionValue);

    private static final Map<AclResourceType, Set<AclOperation>> OPERATIONS = Map.of(
            AclResourceType.TOPIC, EnumSet.of(ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE),
            AclResourceType.GROUP, EnumSet.of(ALL, READ, DELETE, DESCRIBE),
            AclResourceType.CLUSTER, EnumSet.of(ALL, CREATE, ALTER, DESCRIBE, IDEMPOTENT_WRITE),
            AclResourceType.TRANSACTIONAL_ID, EnumSet.of(ALL, WRITE, DESCRIBE));
    private static final Pattern HOST = Pattern.compile("[0-9]{1,3}(\\.[0-9]{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]*");

    private AclBindingRules() {
    }

    /**
     * The binding as stored: checked, its empty host made {@code *}.
     *
     * @throws TidemarkException INVALID_REQUEST naming the binding, what is wrong and what is allowed
     */
    public static AclBinding checked(AclBinding binding) {
        AclBinding stored = binding.getHost().isEmpty() ? binding.toBuilder().setHost(WILDCARD).build() : binding;
        Set<AclOperation> operations = OPERATIONS.get(binding.getResourceType());
        if (operations == null) {
            throw invalid(stored, "a resource type is one of TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID");
        }
        if (binding.getResourceName().isEmpty()) {
            throw invalid(stored, "a binding names its resource (or * for every one of the type)");
        }
        if (binding.getPatternType() != AclPatternType.LITERAL && binding.getPatternType() != AclPatternType.PREFIXED) {
            throw invalid(stored, "a pattern type is LITERAL or PREFIXED");
        }
        if (binding.getResourceType() == AclResourceType.CLUSTER && (!binding.getResourceName().equals(
                CLUSTER_RESOURCE) || binding.getPatternType() != AclPatternType.LITERAL)) {
            throw invalid(stored, "the cluster resource is the LITERAL name " + CLUSTER_RESOURCE);
        }
        checkPrincipal(stored);
        if (!stored.getHost().equals(WILDCARD) && !HOST.matcher(stored.getHost()).matches()) {
            throw invalid(stored, "a host is * or an IP address");
        }
        if (binding.getOperation() == AclOperation.CLUSTER_ACTION) {
            throw invalid(stored, "CLUSTER_ACTION is held by brokers only (a certificate matching "
                    + "tls.broker.subjects) and cannot be granted");
        }
        if (!operations.contains(binding.getOperation())) {
            throw invalid(stored, "a " + binding.getResourceType() + " binding's operation is one of "
                    + operations.stream().map(Enum::name).sorted().toList());
        }
        if (binding.getPermission() != AclPermission.ALLOW && binding.getPermission() != AclPermission.DENY) {
            throw invalid(stored, "a permission is ALLOW or DENY");
        }
        return stored;
    }

    private static void checkPrincipal(AclBinding binding) {
        Principal principal;
        try {
            principal = Principal.parse(binding.getPrincipal(), "principal");
        } catch (TidemarkException e) {
            throw invalid(binding, "a principal is User:NAME or User:*");
        }
        if (!principal.type().equals(Principal.USER)) {
            throw invalid(binding, "a principal is of type " + Principal.USER + " (User:NAME or User:*)");
        }
    }

    /** Whether the filter matches the binding: each field the filter sets equals the binding's. */
    public static boolean matches(AclFilter filter, AclBinding binding) {
        return (filter.getResourceType() == AclResourceType.ACL_RESOURCE_TYPE_UNSPECIFIED
                || filter.getResourceType() == binding.getResourceType())
                && (filter.getResourceName().isEmpty() || filter.getResourceName().equals(binding.getResourceName()))
                && (filter.getPatternType() == AclPatternType.ACL_PATTERN_TYPE_UNSPECIFIED
                || filter.getPatternType() == binding.getPatternType())
                && (filter.getPrincipal().isEmpty() || filter.getPrincipal().equals(binding.getPrincipal()))
                && (filter.getHost().isEmpty() || filter.getHost().equals(binding.getHost()))
                && (filter.getOperation() == AclOperation.ACL_OPERATION_UNSPECIFIED
                || filter.getOperation() == binding.getOperation())
                && (filter.getPermission() == AclPermission.ACL_PERMISSION_UNSPECIFIED
                || filter.getPermission() == binding.getPermission());
    }

    /** One line for logs and errors: {@code ALLOW User:alice READ on TOPIC orders (PREFIXED) from *}. */
    public static String describe(AclBinding binding) {
        return binding.getPermission() + " " + binding.getPrincipal() + " " + binding.getOperation() + " on "
                + binding.getResourceType() + " " + binding.getResourceName() + " (" + binding.getPatternType()
                + ") from " + binding.getHost();
    }

    private static TidemarkException invalid(AclBinding binding, String allowed) {
        return new TidemarkException(ErrorCode.INVALID_REQUEST, "invalid ACL binding '" + describe(binding) + "': "
                + allowed + "; no binding of the request was stored");
    }
}
