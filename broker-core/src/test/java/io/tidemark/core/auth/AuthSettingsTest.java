package io.tidemark.core.auth;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AuthSettingsTest {
    @Test
    void theAuthorizerIsOnByDefaultExactlyWhenTheBrokerSpeaksTls() {
        AuthSettings tls = AuthSettings.fromProperties(Map.of(), "b.properties", true);
        assertTrue(tls.authorizerEnabled());
        assertFalse(tls.allowEveryoneIfNoAclFound());
        assertEquals(Set.of(), tls.superUsers());
        assertEquals("DEFAULT", tls.mapper().toString());
        assertTrue(tls.brokersByCertificate());
        AuthSettings plain = AuthSettings.fromProperties(Map.of(), "b.properties", false);
        assertFalse(plain.authorizerEnabled());
        assertFalse(plain.brokersByCertificate());
        assertFalse(AuthSettings.fromProperties(Map.of("authorizer.enabled", "false"), "b.properties", true)
                .authorizerEnabled());
    }

    @Test
    void superUsersAreSeparatedBySemicolons() {
        AuthSettings settings = AuthSettings.fromProperties(Map.of("super.users", " User:admin ; User:CN=ops,O=x;",
                "allow.everyone.if.no.acl.found", "TRUE"), "b.properties", true);
        assertEquals(Set.of(Principal.user("admin"), Principal.user("CN=ops,O=x")), settings.superUsers());
        assertTrue(settings.allowEveryoneIfNoAclFound());
    }

    @Test
    void badValuesAreNamed() {
        TidemarkException flag = assertThrows(TidemarkException.class,
                () -> AuthSettings.fromProperties(Map.of("authorizer.enabled", "yes"), "b.properties", true));
        assertEquals(ErrorCode.INVALID_CONFIG, flag.code());
        assertEquals("invalid value for authorizer.enabled in b.properties: 'yes' is not allowed; allowed: true, false",
                flag.getMessage());
        TidemarkException user = assertThrows(TidemarkException.class,
                () -> AuthSettings.fromProperties(Map.of("super.users", "admin"), "b.properties", true));
        assertEquals(ErrorCode.INVALID_CONFIG, user.code());
        assertEquals("super.users in b.properties: 'admin' is not a principal; write TYPE:NAME, e.g. User:alice; "
                + "principals are separated by ;", user.getMessage());
    }
}
