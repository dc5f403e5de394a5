package io.tidemark.core.auth;

import com.codahale.metrics.MetricRegistry;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.AclBinding;
import io.tidemark.proto.v1.AclOperation;
import io.tidemark.proto.v1.AclPatternType;
import io.tidemark.proto.v1.AclPermission;
import io.tidemark.proto.v1.AclResourceType;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static io.tidemark.proto.v1.AclOperation.ALL;
import static io.tidemark.proto.v1.AclOperation.CLUSTER_ACTION;
import static io.tidemark.proto.v1.AclOperation.DESCRIBE;
import static io.tidemark.proto.v1.AclOperation.READ;
import static io.tidemark.proto.v1.AclOperation.WRITE;
import static io.tidemark.proto.v1.AclPatternType.LITERAL;
import static io.tidemark.proto.v1.AclPatternType.PREFIXED;
import static io.tidemark.proto.v1.AclPermission.ALLOW;
import static io.tidemark.proto.v1.AclPermission.DENY;
import static io.tidemark.proto.v1.AclResourceType.CLUSTER;
import static io.tidemark.proto.v1.AclResourceType.GROUP;
import static io.tidemark.proto.v1.AclResourceType.TOPIC;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AuthorizerTest {
    private static final Caller ALICE = new Caller(Principal.user("alice"), "10.0.0.1", false);
    private static final Caller BOB = new Caller(Principal.user("bob"), "10.0.0.2", false);
    private static final Caller BROKER = new Caller(Principal.user("CN=broker-1"), "10.0.0.9", true);

    private final List<AclBinding> acls = new ArrayList<>();
    private final MetricRegistry registry = new MetricRegistry();

    private Authorizer authorizer(boolean enabled, boolean allowEveryoneIfNoAclFound, Principal... superUsers) {
        return authorizer(enabled, allowEveryoneIfNoAclFound, true, superUsers);
    }

    private Authorizer authorizer(boolean enabled, boolean allowEveryoneIfNoAclFound, boolean tls,
                                  Principal... superUsers) {
        return new Authorizer(new AuthSettings(enabled, Set.of(superUsers), allowEveryoneIfNoAclFound,
                PrincipalMapper.parse("DEFAULT"), tls, Optional.empty(), Optional.empty()), () -> new AclIndex(acls),
                registry);
    }

    private static AclBinding binding(AclResourceType type, String name, AclPatternType pattern, String principal,
                                      AclOperation operation, AclPermission permission) {
        return AclBindingRules.checked(AclBinding.newBuilder().setResourceType(type).setResourceName(name)
                .setPatternType(pattern).setPrincipal(principal).setOperation(operation).setPermission(permission)
                .build());
    }

    @Test
    void aLiteralAllowGrantsThatTopicOnlyAndNamesTheRefusal() {
        acls.add(binding(TOPIC, "orders", LITERAL, "User:alice", READ, ALLOW));
        Authorizer authorizer = authorizer(true, false);

        authorizer.authorize(ALICE, READ, TOPIC, "orders");
        TidemarkException refused = assertThrows(TidemarkException.class,
                () -> authorizer.authorize(ALICE, READ, TOPIC, "payments"));
        assertEquals(ErrorCode.TOPIC_AUTHORIZATION_FAILED, refused.code());
        assertEquals("User:alice may not READ topic 'payments': no ACL names the resource "
                + "(allow.everyone.if.no.acl.found is false). An admin grants it with tidemark acls add",
                refused.getMessage());
        TidemarkException bob = assertThrows(TidemarkException.class,
                () -> authorizer.authorize(BOB, READ, TOPIC, "orders"));
        assertEquals("User:bob may not READ topic 'orders': no ACL allows it. An admin grants it with tidemark "
                + "acls add", bob.getMessage());
        assertEquals(2, registry.meter("authorization.denied").getCount());
        assertEquals(2, registry.meter("authorization.denied.topic").getCount());
        assertEquals(0, registry.meter("authorization.denied.group").getCount());
    }

    @Test
    void aDenyWinsOverAnyAllowAndReadImpliesDescribeOnlyForAllows() {
        acls.add(binding(TOPIC, "*", LITERAL, "User:*", ALL, ALLOW));
        acls.add(binding(TOPIC, "secret-", PREFIXED, "User:bob", READ, DENY));
        Authorizer authorizer = authorizer(true, false);

        TidemarkException refused = assertThrows(TidemarkException.class,
                () -> authorizer.authorize(BOB, READ, TOPIC, "secret-plans"));
        assertEquals("User:bob may not READ topic 'secret-plans': denied by DENY User:bob READ on TOPIC secret- "
                + "(PREFIXED) from *. An admin grants it with tidemark acls add", refused.getMessage());
        assertTrue(authorizer.permits(BOB, DESCRIBE, TOPIC, "secret-plans"), "a DENY of READ leaves DESCRIBE");
        assertTrue(authorizer.permits(ALICE, READ, TOPIC, "secret-plans"));

        acls.clear();
        acls.add(binding(TOPIC, "orders", LITERAL, "User:alice", WRITE, ALLOW));
        assertTrue(authorizer.permits(ALICE, DESCRIBE, TOPIC, "orders"), "WRITE implies DESCRIBE");
        assertFalse(authorizer.permits(ALICE, READ, TOPIC, "orders"));
    }

    @Test
    void aBindingForAnotherHostDoesNotApply() {
        acls.add(AclBindingRules.checked(binding(TOPIC, "orders", LITERAL, "User:alice", READ, ALLOW).toBuilder()
                .setHost("10.0.0.7").build()));
        Authorizer authorizer = authorizer(true, false);
        assertFalse(authorizer.permits(ALICE, READ, TOPIC, "orders"));
        assertTrue(authorizer.permits(new Caller(Principal.user("alice"), "10.0.0.7", false), READ, TOPIC,
                "orders"));
    }

    @Test
    void anInternalTopicIsGrantedOnlyByABindingOfItsOwnName() {
        acls.add(binding(TOPIC, "*", LITERAL, "User:*", ALL, ALLOW));
        acls.add(binding(TOPIC, "__", PREFIXED, "User:bob", ALL, ALLOW));
        acls.add(binding(TOPIC, "__mirror_state", LITERAL, "User:mirror", ALL, ALLOW));
        Authorizer authorizer = authorizer(true, false);
        assertFalse(authorizer.permits(ALICE, WRITE, TOPIC, "__mirror_state"));
        assertFalse(authorizer.permits(BOB, READ, TOPIC, "__mirror_state"));
        assertTrue(authorizer.permits(new Caller(Principal.user("mirror"), "10.0.0.3", false), WRITE, TOPIC,
                "__mirror_state"));
    }

    @Test
    void superUsersBrokersAndTheSwitches() {
        Authorizer authorizer = authorizer(true, false, Principal.user("admin"));
        Caller admin = new Caller(Principal.user("admin"), "10.0.0.5", false);
        assertTrue(authorizer.permits(admin, AclOperation.ALTER, CLUSTER, AclBindingRules.CLUSTER_RESOURCE));
        TidemarkException refused = assertThrows(TidemarkException.class,
                () -> authorizer.authorize(admin, CLUSTER_ACTION, CLUSTER, AclBindingRules.CLUSTER_RESOURCE));
        assertEquals(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, refused.code());
        assertEquals("User:admin may not CLUSTER_ACTION cluster 'tidemark-cluster': only brokers may (a certificate "
                + "whose subject matches tls.broker.subjects). An admin grants it with tidemark acls add",
                refused.getMessage());
        authorizer.authorize(BROKER, CLUSTER_ACTION, CLUSTER, AclBindingRules.CLUSTER_RESOURCE);
        assertTrue(authorizer.permits(BROKER, READ, GROUP, "any"));

        assertTrue(authorizer(false, false).permits(ALICE, READ, GROUP, "g"), "authorizer off");
        assertFalse(authorizer(false, false).permits(ALICE, CLUSTER_ACTION, CLUSTER,
                AclBindingRules.CLUSTER_RESOURCE), "only brokers, even with the authorizer off");
        assertTrue(authorizer(false, false, false).permits(ALICE, CLUSTER_ACTION, CLUSTER,
                AclBindingRules.CLUSTER_RESOURCE), "in plain text, where brokers cannot be told apart");
        assertTrue(authorizer(true, true).permits(ALICE, READ, GROUP, "g"), "no ACL names g");
        acls.add(binding(GROUP, "g", LITERAL, "User:bob", READ, ALLOW));
        assertFalse(authorizer(true, true).permits(ALICE, READ, GROUP, "g"), "an ACL names g");
    }

    @Test
    void anIdempotentProducerNeedsIdempotentWriteOrWriteOnSomeTopic() {
        Authorizer authorizer = authorizer(true, false);
        TidemarkException refused = assertThrows(TidemarkException.class,
                () -> authorizer.authorizeIdempotentWrite(ALICE));
        assertEquals("User:alice may not IDEMPOTENT_WRITE cluster 'tidemark-cluster': neither IDEMPOTENT_WRITE on the "
                + "cluster nor WRITE on any topic is allowed. An admin grants it with tidemark acls add",
                refused.getMessage());
        acls.add(binding(TOPIC, "orders-", PREFIXED, "User:alice", WRITE, ALLOW));
        authorizer.authorizeIdempotentWrite(ALICE);
        acls.add(binding(TOPIC, "*", LITERAL, "User:alice", WRITE, DENY));
        assertThrows(TidemarkException.class, () -> authorizer.authorizeIdempotentWrite(ALICE));
        acls.clear();
        acls.add(binding(CLUSTER, AclBindingRules.CLUSTER_RESOURCE, LITERAL, "User:bob", AclOperation.IDEMPOTENT_WRITE,
                ALLOW));
        authorizer.authorizeIdempotentWrite(BOB);
    }
}
