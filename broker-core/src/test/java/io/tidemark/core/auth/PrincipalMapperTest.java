package io.tidemark.core.auth;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** tls.principal.mapping.rules, read as Kafka reads ssl.principal.mapping.rules: the names it gives, how it refuses. */
class PrincipalMapperTest {
    private static final String ALLOWED = "; allowed: DEFAULT and RULE:pattern/replacement/ separated by commas, "
            + "where the pattern is a Java regular expression the whole subject must match, the replacement may name "
            + "its groups ($1), \\/ is a slash within either, and an L or U after the last slash lower- or upper-cases "
            + "the name; e.g. RULE:^CN=([^,]+),OU=eng,.*$/$1/L,DEFAULT";

    private static String name(String rules, String subject) {
        Principal principal = PrincipalMapper.parse(rules).map(subject);
        assertEquals(Principal.USER, principal.type());
        return principal.name();
    }

    private static String refused(String rules) {
        TidemarkException refused = assertThrows(TidemarkException.class, () -> PrincipalMapper.parse(rules));
        assertEquals(ErrorCode.INVALID_CONFIG, refused.code());
        return refused.getMessage();
    }

    private static String unmapped(String rules, String subject) {
        PrincipalMapper mapper = PrincipalMapper.parse(rules);
        TidemarkException refused = assertThrows(TidemarkException.class, () -> mapper.map(subject));
        assertEquals(ErrorCode.AUTHENTICATION_FAILED, refused.code());
        return refused.getMessage();
    }

    @Test
    void byDefaultTheWholeSubjectIsTheName() {
        assertEquals("DEFAULT", PrincipalMapper.DEFAULT_PRINCIPAL_MAPPING_RULES);
        PrincipalMapper mapper = PrincipalMapper.parse(PrincipalMapper.DEFAULT_PRINCIPAL_MAPPING_RULES);
        assertEquals(Principal.user("CN=alice,OU=eng,O=Example"), mapper.map("CN=alice,OU=eng,O=Example"));
        assertEquals("DEFAULT", PrincipalMapper.parse("DEFAULT").toString());
    }

    @Test
    void aRuleNamesTheSubjectByItsReplacementOfThePatternsGroups() {
        assertEquals("alice", name("RULE:^CN=(.*?),OU=(.*?)$/$1/", "CN=alice,OU=eng"));
        assertEquals("alice@eng", name("RULE:^CN=(.*?),OU=(.*?)$/$1@$2/", "CN=alice,OU=eng"));
        assertEquals("eng.alice", name("RULE:^CN=(?<user>.*?),OU=(?<unit>.*?)$/${unit}.${user}/", "CN=alice,OU=eng"));
        assertEquals("user-CN=alice", name("RULE:^CN=.*$/user-$0/", "CN=alice"));
    }

    @Test
    void lLowerCasesTheNameAndUUpperCasesIt() {
        assertEquals("alice", name("RULE:^CN=(.*?),OU=(.*?)$/$1/L", "CN=Alice,OU=eng"));
        assertEquals("ALICE@ENG", name("RULE:^CN=(.*?),OU=(.*?)$/$1@$2/U", "CN=Alice,OU=eng"));
    }

    @Test
    void theFirstRuleWhosePatternMatchesTheWholeSubjectNamesIt() {
        String rules = "RULE:^CN=(.*?),OU=ServiceUsers,.*$/$1/L,RULE:^CN=(.*?),OU=(.*?),O=.*$/$1@$2/,DEFAULT";
        assertEquals("billing", name(rules, "CN=Billing,OU=ServiceUsers,O=Example"));
        assertEquals("alice@eng", name(rules, "CN=alice,OU=eng,O=Example"));
        assertEquals("CN=carol", name(rules, "CN=carol"));
        // the first rule's pattern matches a part of this subject, not all of it
        assertEquals("CN=alice,OU=eng,O=Example", name("RULE:CN=(.*?),OU=eng/$1/,DEFAULT",
                "CN=alice,OU=eng,O=Example"));
    }

    @Test
    void aSubjectNoRuleMatchesIsRefusedNamingTheSubjectAndTheRules() {
        assertEquals("no rule of tls.principal.mapping.rules 'RULE:^CN=(.*?),OU=eng$/$1/, RULE:^CN=(admin)$/$1/U' "
                + "matches the client certificate's subject 'CN=bob,OU=ops' (a rule's pattern must match the whole "
                + "subject)", unmapped("RULE:^CN=(.*?),OU=eng$/$1/, RULE:^CN=(admin)$/$1/U", "CN=bob,OU=ops"));
    }

    @Test
    void aRuleThatMapsASubjectToAnEmptyNameRefusesIt() {
        assertEquals("rule 'RULE:^CN=(.*?),OU=eng$/$1/' of tls.principal.mapping.rules maps the client certificate's "
                + "subject 'CN=,OU=eng' to an empty name", unmapped("RULE:^CN=(.*?),OU=eng$/$1/,DEFAULT",
                "CN=,OU=eng"));
    }

    @Test
    void whitespaceAroundRulesAndEmptyRulesBetweenCommasAreSkippedButWhitespaceWithinARuleIsKept() {
        String rules = " \t,, RULE:^CN=(.*?),OU=eng$/$1/U ,\n DEFAULT , ";
        assertEquals("ALICE", name(rules, "CN=alice,OU=eng"));
        assertEquals("CN=bob", name(rules, "CN=bob"));
        assertEquals(rules, PrincipalMapper.parse(rules).toString());
        assertEquals("CN=alice", name("RULE: CN=(.*)/$1/, DEFAULT", "CN=alice"));
        assertEquals("alice ", name("RULE: CN=(.*)/$1 /, DEFAULT", " CN=alice"));
    }

    @Test
    void patternsAndReplacementsHoldCommasAndEscapedSlashes() {
        assertEquals("Smith\\, John", name("RULE:^CN=((\\\\, *|\\w)+)(,.*|$)/$1/,DEFAULT", "CN=Smith\\, John,OU=eng"));
        assertEquals("alice/eng", name("RULE:^CN=(.*?)\\/(.*?),.*$/$2\\/$1/", "CN=eng/alice,O=Example"));
    }

    @Test
    void aGroupReferenceNamingNoGroupIsText() {
        assertEquals("alice$2", name("RULE:^CN=(.*)$/$1$2/", "CN=alice"));
        assertEquals("admin$1", name("RULE:^CN=root$/admin$1/", "CN=root"));
        assertEquals("alice2", name("RULE:^CN=(.*)$/$12/", "CN=alice"));
        assertEquals("$1-alice", name("RULE:^CN=(.*)$/\\$1-$1/", "CN=alice"));
    }

    @Test
    void aRuleReplacesEveryMatchOfItsPatternAsKafkaDoes() {
        // the lazy .*? first matches CN=alice alone, and the rest of the subject stays
        assertEquals("alice,OU=eng", name("RULE:CN=([^,]*).*?/$1/", "CN=alice,OU=eng"));
        assertEquals("alice", name("RULE:^CN=([^,]*).*$/$1/", "CN=alice,OU=eng"));
    }

    @Test
    void malformedRulesAreRefusedNamingTheBadPartAndWhatIsAllowed() {
        assertEquals("invalid value for tls.principal.mapping.rules: '' holds no rule" + ALLOWED, refused(""));
        assertEquals("invalid value for tls.principal.mapping.rules: ' , ' holds no rule" + ALLOWED, refused(" , "));
        assertEquals("invalid value for tls.principal.mapping.rules: 'RULE:^CN=(.*?),OU=eng$' has no slash after its "
                + "pattern" + ALLOWED, refused("RULE:^CN=(.*?),OU=eng$"));
        assertEquals("invalid value for tls.principal.mapping.rules: 'RULE:^CN=(.*?),OU=eng$/$1, DEFAULT' has no "
                + "slash after its replacement" + ALLOWED, refused("RULE:^CN=(.*?),OU=eng$/$1, DEFAULT"));
        assertEquals("invalid value for tls.principal.mapping.rules: after 'RULE:^CN=(.*)$/$1/' comes 'X', where only "
                + "L or U, right after the slash, or a comma may follow" + ALLOWED, refused("RULE:^CN=(.*)$/$1/X"));
        assertEquals("invalid value for tls.principal.mapping.rules: after 'RULE:^CN=(.*)$/$1/' comes ' L', where "
                + "only L or U, right after the slash, or a comma may follow" + ALLOWED,
                refused("RULE:^CN=(.*)$/$1/ L"));
        assertEquals("invalid value for tls.principal.mapping.rules: after 'RULE:^CN=(.*)$/$1/L' comes 'U', where only "
                + "a comma may follow" + ALLOWED, refused("RULE:^CN=(.*)$/$1/LU,DEFAULT"));
        assertEquals("invalid value for tls.principal.mapping.rules: after 'DEFAULT' comes '/L', where only a comma "
                + "may follow" + ALLOWED, refused("DEFAULT/L"));
        assertEquals("invalid value for tls.principal.mapping.rules: after 'DEFAULT' comes ' RULE:^CN=(.*)$/$1/', "
                + "where only a comma may follow" + ALLOWED, refused("DEFAULT RULE:^CN=(.*)$/$1/"));
        assertEquals("invalid value for tls.principal.mapping.rules: 'default' is not a rule" + ALLOWED,
                refused("RULE:^CN=(.*)$/$1/, default"));
        assertEquals("invalid value for tls.principal.mapping.rules: 'rule:^CN=(.*)$/$1/' is not a rule" + ALLOWED,
                refused("rule:^CN=(.*)$/$1/"));
    }

    @Test
    void aRuleJavaCannotApplyIsRefusedWhenRead() {
        assertEquals("invalid value for tls.principal.mapping.rules: the pattern of 'RULE:^CN=(.*$/$1/' is not a Java "
                + "regular expression (Unclosed group near index 8)" + ALLOWED, refused("RULE:^CN=(.*$/$1/"));
        assertEquals("invalid value for tls.principal.mapping.rules: the replacement of 'RULE:^CN=(.*)$/$1$/' cannot "
                + "be applied (Illegal group reference: group index is missing)" + ALLOWED,
                refused("RULE:^CN=(.*)$/$1$/"));
        assertEquals("invalid value for tls.principal.mapping.rules: the replacement of "
                + "'RULE:^CN=(?<user>.*)$/${usr}/' cannot be applied (No group with name {usr})" + ALLOWED,
                refused("RULE:^CN=(?<user>.*)$/${usr}/"));
        assertEquals("invalid value for tls.principal.mapping.rules: the replacement of 'RULE:^CN=(.*)$/$user/' cannot "
                + "be applied (Illegal group reference)" + ALLOWED, refused("RULE:^CN=(.*)$/$user/"));
    }
}
