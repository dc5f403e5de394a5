package io.tidemark.core.auth;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.AclBinding;
import io.tidemark.proto.v1.AclFilter;
import io.tidemark.proto.v1.AclOperation;
import io.tidemark.proto.v1.AclPatternType;
import io.tidemark.proto.v1.AclPermission;
import io.tidemark.proto.v1.AclResourceType;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AclBindingRulesTest {
    private static final AclBinding READ_ORDERS = AclBinding.newBuilder().setResourceType(AclResourceType.TOPIC)
            .setResourceName("orders").setPatternType(AclPatternType.LITERAL).setPrincipal("User:alice")
            .setOperation(AclOperation.READ).setPermission(AclPermission.ALLOW).build();

    private static String refusal(UnaryOperator<AclBinding.Builder> change) {
        TidemarkException e = assertThrows(TidemarkException.class,
                () -> AclBindingRules.checked(change.apply(READ_ORDERS.toBuilder()).build()));
        assertEquals(ErrorCode.INVALID_REQUEST, e.code());
        return e.getMessage();
    }

    @Test
    void anEmptyHostIsStoredAsAnyHost() {
        assertEquals("*", AclBindingRules.checked(READ_ORDERS).getHost());
        assertEquals("10.1.2.3", AclBindingRules.checked(READ_ORDERS.toBuilder().setHost("10.1.2.3").build())
                .getHost());
    }

    @Test
    void eachInvalidFieldIsNamedWithWhatIsAllowed() {
        assertEquals("invalid ACL binding 'ALLOW User:alice WRITE on GROUP orders (LITERAL) from *': a GROUP "
                + "binding's operation is one of [ALL, DELETE, DESCRIBE, READ]; no binding of the request was stored",
                refusal(b -> b.setResourceType(AclResourceType.GROUP).setOperation(AclOperation.WRITE)));
        assertEquals("invalid ACL binding 'ALLOW alice READ on TOPIC orders (LITERAL) from *': a principal is "
                + "User:NAME or User:*; no binding of the request was stored", refusal(b -> b.setPrincipal("alice")));
        assertEquals("invalid ACL binding 'ALLOW Group:ops READ on TOPIC orders (LITERAL) from *': a principal is of "
                + "type User (User:NAME or User:*); no binding of the request was stored",
                refusal(b -> b.setPrincipal("Group:ops")));
        assertEquals("invalid ACL binding 'ALLOW User:alice CLUSTER_ACTION on CLUSTER tidemark-cluster (LITERAL) "
                + "from *': CLUSTER_ACTION is held by brokers only (a certificate matching tls.broker.subjects) and "
                + "cannot be granted; no binding of the request was stored",
                refusal(b -> b.setResourceType(AclResourceType.CLUSTER).setResourceName("tidemark-cluster")
                        .setOperation(AclOperation.CLUSTER_ACTION)));
        assertEquals("invalid ACL binding 'ALLOW User:alice ALTER on CLUSTER prod (LITERAL) from *': the cluster "
                + "resource is the LITERAL name tidemark-cluster; no binding of the request was stored",
                refusal(b -> b.setResourceType(AclResourceType.CLUSTER).setResourceName("prod")
                        .setOperation(AclOperation.ALTER)));
        assertEquals("invalid ACL binding 'ALLOW User:alice READ on TOPIC orders (LITERAL) from example.com': a host "
                + "is * or an IP address; no binding of the request was stored",
                refusal(b -> b.setHost("example.com")));
        assertEquals("invalid ACL binding 'ALLOW User:alice READ on TOPIC  (LITERAL) from *': a binding names its "
                + "resource (or * for every one of the type); no binding of the request was stored",
                refusal(b -> b.setResourceName("")));
        assertEquals("invalid ACL binding 'ACL_PERMISSION_UNSPECIFIED User:alice READ on TOPIC orders (LITERAL) from "
                + "*': a permission is ALLOW or DENY; no binding of the request was stored",
                refusal(AclBinding.Builder::clearPermission));
        assertEquals("invalid ACL binding 'ALLOW User:alice READ on TOPIC orders (ACL_PATTERN_TYPE_UNSPECIFIED) from "
                + "*': a pattern type is LITERAL or PREFIXED; no binding of the request was stored",
                refusal(AclBinding.Builder::clearPatternType));
    }

    @Test
    void aFilterMatchesOnTheFieldsItSets() {
        AclBinding stored = AclBindingRules.checked(READ_ORDERS);
        assertTrue(AclBindingRules.matches(AclFilter.getDefaultInstance(), stored));
        assertTrue(AclBindingRules.matches(AclFilter.newBuilder().setPrincipal("User:alice")
                .setResourceType(AclResourceType.TOPIC).build(), stored));
        assertFalse(AclBindingRules.matches(AclFilter.newBuilder().setPrincipal("User:bob").build(), stored));
        assertFalse(AclBindingRules.matches(AclFilter.newBuilder().setPatternType(AclPatternType.PREFIXED).build(),
                stored));
        assertFalse(AclBindingRules.matches(AclFilter.newBuilder().setOperation(AclOperation.WRITE).build(), stored));
        assertTrue(AclBindingRules.matches(AclFilter.newBuilder().setHost("*").setResourceName("orders").build(),
                stored));
    }
}
