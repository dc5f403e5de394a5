package io.tidemark.core.auth;

import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.AclOperation;
import io.tidemark.proto.v1.AclResourceType;
import io.tidemark.proto.v1.ErrorCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Decides whether a caller may do an operation on a resource: a broker may do everything, and it alone
 * CLUSTER_ACTION (in plain text, where brokers cannot be told from clients, everyone may); with the authorizer off,
 * everyone may do the rest; a super user may; otherwise the cluster's ACLs
 * decide ({@link AclIndex}), and a resource no ACL names is open only with {@code allow.everyone.if.no.acl.found}.
 *
 * <p>A refusal is a {@link TidemarkException} of the resource type's code (TOPIC_, GROUP_, CLUSTER_ or
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED) naming the principal, the operation and the resource; it is counted in the
 * meters {@code authorization.denied} and {@code authorization.denied.TYPE} (topic, group, cluster,
 * transactional-id) and written to the audit log, the logger {@value #AUDIT_LOGGER}, at INFO, with the caller's host
 * and why (the DENY that matched, or no ALLOW). Allowed operations are logged there at DEBUG. A question asked only to
 * filter a list ({@link #permits}) is neither counted nor logged, as Kafka does for the topics a Metadata request
 * leaves out.
 *
 * <p>Thread-safe: the ACLs are read from {@code acls} at each decision.
 */
public final class Authorizer {
    public static final String AUDIT_LOGGER = "io.tidemark.audit";
    private static final Logger AUDIT = LoggerFactory.getLogger(AUDIT_LOGGER);
    private static final Map<AclResourceType, ErrorCode> CODES = Map.of(
            AclResourceType.TOPIC, ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            AclResourceType.GROUP, ErrorCode.GROUP_AUTHORIZATION_FAILED,
            AclResourceType.CLUSTER, ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            AclResourceType.TRANSACTIONAL_ID, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);

    private final AuthSettings settings;
    private final Supplier<AclIndex> acls;
    private final Meter denied;
    private final Map<AclResourceType, Meter> deniedByType = new EnumMap<>(AclResourceType.class);

    public Authorizer(AuthSettings settings, Supplier<AclIndex> acls, MetricRegistry registry) {
        this.settings = settings;
        this.acls = acls;
        this.denied = registry.meter("authorization.denied");
        for (AclResourceType type : CODES.keySet()) {
            deniedByType.put(type, registry.meter("authorization.denied." + type.name().toLowerCase(Locale.ROOT)
                    .replace('_', '-')));
        }
    }

    /**
     * Lets the call go on when the caller may do the operation on the resource.
     *
     * @throws TidemarkException the resource type's AUTHORIZATION_FAILED code when it may not
     */
    public void authorize(Caller caller, AclOperation operation, AclResourceType type, String name) {
        Decision decision = decide(caller, operation, type, name);
        if (!decision.allowed()) {
            throw refuse(caller, operation, type, name, decision.why());
        }
        if (AUDIT.isDebugEnabled()) {
            AUDIT.debug("ALLOWED {} {} {} '{}' from {}: {}", caller.principal(), operation, type, name,
                    caller.host(), decision.why());
        }
    }

    /**
     * Lets an idempotent producer without a transactional id have a producer id: with IDEMPOTENT_WRITE on the
     * cluster, or WRITE allowed on some topic (Kafka's rule).
     *
     * @throws TidemarkException CLUSTER_AUTHORIZATION_FAILED when neither
     */
    public void authorizeIdempotentWrite(Caller caller) {
        if (decide(caller, AclOperation.IDEMPOTENT_WRITE, AclResourceType.CLUSTER,
                AclBindingRules.CLUSTER_RESOURCE).allowed()
                || acls.get().allowsSome(caller.principal(), caller.host(), AclOperation.WRITE,
                AclResourceType.TOPIC)) {
            return;
        }
        throw refuse(caller, AclOperation.IDEMPOTENT_WRITE, AclResourceType.CLUSTER, AclBindingRules.CLUSTER_RESOURCE,
                "neither IDEMPOTENT_WRITE on the cluster nor WRITE on any topic is allowed");
    }

    /** Whether the caller may do the operation; neither counted nor logged (for leaving resources out of a list). */
    public boolean permits(Caller caller, AclOperation operation, AclResourceType type, String name) {
        return decide(caller, operation, type, name).allowed();
    }

    private record Decision(boolean allowed, String why) {
    }

    private Decision decide(Caller caller, AclOperation operation, AclResourceType type, String name) {
        if (caller.broker()) {
            return new Decision(true, "a broker");
        }
        if (operation == AclOperation.CLUSTER_ACTION) {
            return settings.brokersByCertificate()
                    ? new Decision(false, "only brokers may (a certificate whose subject matches tls.broker.subjects)")
                    : new Decision(true, "in plain text no caller can be told from a broker");
        }
        if (!settings.authorizerEnabled()) {
            return new Decision(true, "authorizer.enabled is false");
        }
        if (settings.superUsers().contains(caller.principal())) {
            return new Decision(true, "a super user");
        }
        AclIndex.Match match = acls.get().match(caller.principal(), caller.host(), operation, type, name);
        return switch (match.outcome()) {
            case ALLOWED -> new Decision(true, AclBindingRules.describe(match.binding().orElseThrow()));
            case DENIED -> new Decision(false, "denied by " + AclBindingRules.describe(match.binding()
                    .orElseThrow()));
            case NO_ACL_ALLOWS -> new Decision(false, "no ACL allows it");
            case NO_ACL_FOUND -> settings.allowEveryoneIfNoAclFound()
                    ? new Decision(true, "no ACL names the resource and allow.everyone.if.no.acl.found is true")
                    : new Decision(false, "no ACL names the resource (allow.everyone.if.no.acl.found is false)");
        };
    }

    private TidemarkException refuse(Caller caller, AclOperation operation, AclResourceType type, String name,
                                     String why) {
        denied.mark();
        deniedByType.get(type).mark();
        AUDIT.info("DENIED {} {} {} '{}' from {}: {}", caller.principal(), operation, type, name, caller.host(),
                why);
        return new TidemarkException(CODES.get(type), caller.principal() + " may not " + operation + " "
                + type.name().toLowerCase(Locale.ROOT).replace('_', ' ') + " '" + name + "': " + why
                + ". An admin grants it with tidemark acls add");
    }
}
