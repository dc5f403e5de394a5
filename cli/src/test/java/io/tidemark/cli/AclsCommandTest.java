package io.tidemark.cli;

import io.tidemark.proto.v1.AclBinding;
import io.tidemark.proto.v1.AclFilter;
import io.tidemark.proto.v1.AclOperation;
import io.tidemark.proto.v1.AclPatternType;
import io.tidemark.proto.v1.AclPermission;
import io.tidemark.proto.v1.AclResourceType;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import static io.tidemark.proto.v1.AclOperation.CREATE;
import static io.tidemark.proto.v1.AclOperation.DESCRIBE;
import static io.tidemark.proto.v1.AclOperation.IDEMPOTENT_WRITE;
import static io.tidemark.proto.v1.AclOperation.READ;
import static io.tidemark.proto.v1.AclOperation.WRITE;
import static io.tidemark.proto.v1.AclPatternType.LITERAL;
import static io.tidemark.proto.v1.AclPatternType.PREFIXED;
import static io.tidemark.proto.v1.AclPermission.ALLOW;
import static io.tidemark.proto.v1.AclPermission.DENY;
import static io.tidemark.proto.v1.AclResourceType.CLUSTER;
import static io.tidemark.proto.v1.AclResourceType.GROUP;
import static io.tidemark.proto.v1.AclResourceType.TOPIC;
import static io.tidemark.proto.v1.AclResourceType.TRANSACTIONAL_ID;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code tidemark acls}: the flags as the bindings and filters they send, and the usage errors, without a broker. */
class AclsCommandTest {
    private static final String OPERATIONS = "all, read, write, create, delete, alter, describe, cluster-action, "
            + "idempotent-write";

    @Test
    void addSendsEveryResourceTimesPrincipalTimesOperation() {
        assertEquals(List.of(
                        binding(TOPIC, "orders", LITERAL, "User:alice", "*", READ, ALLOW),
                        binding(TOPIC, "orders", LITERAL, "User:alice", "*", WRITE, ALLOW),
                        binding(TOPIC, "orders", LITERAL, "User:bob", "*", READ, ALLOW),
                        binding(TOPIC, "orders", LITERAL, "User:bob", "*", WRITE, ALLOW),
                        binding(GROUP, "billing", LITERAL, "User:alice", "*", READ, ALLOW),
                        binding(GROUP, "billing", LITERAL, "User:alice", "*", WRITE, ALLOW),
                        binding(GROUP, "billing", LITERAL, "User:bob", "*", READ, ALLOW),
                        binding(GROUP, "billing", LITERAL, "User:bob", "*", WRITE, ALLOW)),
                add("--allow-principal", "User:alice", "--allow-principal", "User:bob", "--operation", "read,WRITE",
                        "--operation", "Read", "--group", "billing", "--topic", "orders"));
    }

    @Test
    void addTakesEveryOperationByItsFlagName() {
        List<AclOperation> operations = add("--allow-principal", "User:*", "--cluster", "--operation",
                OPERATIONS.replace(" ", "")).stream().map(AclBinding::getOperation).toList();
        assertEquals(List.of(AclOperation.ALL, READ, WRITE, CREATE, AclOperation.DELETE, AclOperation.ALTER, DESCRIBE,
                AclOperation.CLUSTER_ACTION, IDEMPOTENT_WRITE), operations);
    }

    @Test
    void addDeniesFromTheDenyHostsAndAllowsFromTheAllowHosts() {
        assertEquals(List.of(
                        binding(TRANSACTIONAL_ID, "tx-1", LITERAL, "User:*", "10.0.0.1", WRITE, ALLOW),
                        binding(TRANSACTIONAL_ID, "tx-1", LITERAL, "User:mallory", "10.0.0.2", WRITE, DENY),
                        binding(TRANSACTIONAL_ID, "tx-1", LITERAL, "User:mallory", "10.0.0.3", WRITE, DENY)),
                add("--allow-principal", "User:*", "--allow-host", "10.0.0.1", "--deny-principal", "User:mallory",
                        "--deny-host", "10.0.0.2", "--deny-host", "10.0.0.3", "--operation", "write",
                        "--transactional-id", "tx-1"));
        assertEquals(List.of(binding(TOPIC, "orders", LITERAL, "User:mallory", "*", READ, DENY)),
                add("--deny-principal", "User:mallory", "--operation", "read", "--topic", "orders"));
    }

    @Test
    void addPrefixedPatternsButTheClusterStaysLiteral() {
        assertEquals(List.of(
                        binding(TOPIC, "orders-", PREFIXED, "User:alice", "*", DESCRIBE, ALLOW),
                        binding(CLUSTER, "tidemark-cluster", LITERAL, "User:alice", "*", DESCRIBE, ALLOW)),
                add("--allow-principal", "User:alice", "--operation", "describe", "--topic", "orders-", "--cluster",
                        "--resource-pattern-type", "PREFIXED"));
    }

    @Test
    void producerAllowsWriteDescribeCreateOnTopicsWriteDescribeOnTransactionalIdsAndIdempotentWrite() {
        assertEquals(List.of(
                        binding(TOPIC, "orders", LITERAL, "User:app", "*", WRITE, ALLOW),
                        binding(TOPIC, "orders", LITERAL, "User:app", "*", DESCRIBE, ALLOW),
                        binding(TOPIC, "orders", LITERAL, "User:app", "*", CREATE, ALLOW)),
                add("--producer", "--allow-principal", "User:app", "--topic", "orders"));
        assertEquals(List.of(
                        binding(TOPIC, "orders", PREFIXED, "User:app", "10.0.0.1", WRITE, ALLOW),
                        binding(TOPIC, "orders", PREFIXED, "User:app", "10.0.0.1", DESCRIBE, ALLOW),
                        binding(TOPIC, "orders", PREFIXED, "User:app", "10.0.0.1", CREATE, ALLOW),
                        binding(TRANSACTIONAL_ID, "tx-", PREFIXED, "User:app", "10.0.0.1", WRITE, ALLOW),
                        binding(TRANSACTIONAL_ID, "tx-", PREFIXED, "User:app", "10.0.0.1", DESCRIBE, ALLOW),
                        binding(CLUSTER, "tidemark-cluster", LITERAL, "User:app", "10.0.0.1", IDEMPOTENT_WRITE,
                                ALLOW)),
                add("--producer", "--idempotent", "--allow-principal", "User:app", "--allow-host", "10.0.0.1",
                        "--topic", "orders", "--transactional-id", "tx-", "--resource-pattern-type", "prefixed"));
    }

    @Test
    void consumerAllowsReadDescribeOnTopicsAndReadOnGroups() {
        assertEquals(List.of(
                        binding(TOPIC, "orders", LITERAL, "User:app", "*", READ, ALLOW),
                        binding(TOPIC, "orders", LITERAL, "User:app", "*", DESCRIBE, ALLOW),
                        binding(GROUP, "billing", LITERAL, "User:app", "*", READ, ALLOW)),
                add("--consumer", "--allow-principal", "User:app", "--topic", "orders", "--group", "billing"));
    }

    @Test
    void producerAndConsumerTogetherAllowEachOperationOnce() {
        assertEquals(List.of(
                        binding(TOPIC, "orders", LITERAL, "User:app", "*", WRITE, ALLOW),
                        binding(TOPIC, "orders", LITERAL, "User:app", "*", DESCRIBE, ALLOW),
                        binding(TOPIC, "orders", LITERAL, "User:app", "*", CREATE, ALLOW),
                        binding(TOPIC, "orders", LITERAL, "User:app", "*", READ, ALLOW),
                        binding(GROUP, "billing", LITERAL, "User:app", "*", READ, ALLOW)),
                add("--producer", "--consumer", "--allow-principal", "User:app", "--topic", "orders", "--group",
                        "billing"));
    }

    @Test
    void addRefusesWhatItCannotTurnIntoBindings() {
        assertEquals("acls add needs a principal: --allow-principal or --deny-principal TYPE:NAME (User:alice, or "
                + "User:* for every principal)", addError("--operation", "read", "--topic", "orders"));
        assertEquals("acls add needs --operation OP (" + OPERATIONS + "), or --producer or --consumer",
                addError("--allow-principal", "User:alice", "--topic", "orders"));
        assertEquals("acls add needs a resource: --topic, --group, --transactional-id or --cluster",
                addError("--allow-principal", "User:alice", "--operation", "read"));
        assertEquals("--operation is 'fly'; allowed: " + OPERATIONS,
                addError("--allow-principal", "User:alice", "--operation", "read,fly", "--topic", "orders"));
        assertEquals("--consumer needs --group: the consumer group it reads as",
                addError("--consumer", "--allow-principal", "User:app", "--topic", "orders"));
        assertEquals("--allow-principal: 'alice' is not a principal; write TYPE:NAME, e.g. User:alice",
                addError("--allow-principal", "alice", "--operation", "read", "--topic", "orders"));
        assertEquals("--deny-principal: 'User:' is not a principal; write TYPE:NAME, e.g. User:alice",
                addError("--deny-principal", "User:", "--operation", "read", "--topic", "orders"));
        assertEquals("--resource-pattern-type is 'any'; allowed: literal, prefixed",
                addError("--allow-principal", "User:alice", "--operation", "read", "--topic", "orders",
                        "--resource-pattern-type", "any"));
        assertEquals("--allow-host needs --allow-principal: the principals allowed from it",
                addError("--deny-principal", "User:alice", "--allow-host", "10.0.0.1", "--operation", "read",
                        "--topic", "orders"));
        assertEquals("--deny-host needs --deny-principal: the principals denied from it",
                addError("--allow-principal", "User:alice", "--deny-host", "10.0.0.1", "--operation", "read",
                        "--topic", "orders"));
    }

    @Test
    void addRefusesRoleFlagsOutOfPlace() {
        assertEquals("--idempotent goes with --producer",
                addError("--idempotent", "--allow-principal", "User:app", "--operation", "write", "--topic", "t"));
        assertEquals("--producer and --consumer choose the operations themselves: leave --operation out",
                addError("--producer", "--allow-principal", "User:app", "--operation", "write", "--topic", "t"));
        assertEquals("--producer and --consumer add ALLOW ACLs only: leave --deny-principal out",
                addError("--producer", "--deny-principal", "User:app", "--topic", "t"));
        assertEquals("--producer needs --topic", addError("--producer", "--allow-principal", "User:app",
                "--transactional-id", "tx"));
        assertEquals("--consumer needs --topic", addError("--consumer", "--allow-principal", "User:app",
                "--group", "g"));
        assertEquals("--producer and --consumer take no --cluster (--producer --idempotent allows idempotent-write "
                + "on the cluster)", addError("--producer", "--allow-principal", "User:app", "--topic", "t",
                "--cluster"));
        assertEquals("--transactional-id goes with --producer, not with --consumer alone",
                addError("--consumer", "--allow-principal", "User:app", "--topic", "t", "--group", "g",
                        "--transactional-id", "tx"));
        assertEquals("--group goes with --consumer, not with --producer alone",
                addError("--producer", "--allow-principal", "User:app", "--topic", "t", "--group", "g"));
    }

    @Test
    void filtersLeaveTheFieldsOfFlagsLeftOutUnset() {
        assertEquals(List.of(AclFilter.getDefaultInstance()), listFilters());
        assertEquals(List.of(AclFilter.newBuilder().setResourceType(TOPIC).setResourceName("orders").build()),
                listFilters("--topic", "orders"));
        assertEquals(List.of(AclFilter.newBuilder().setResourceType(CLUSTER).setResourceName("tidemark-cluster")
                .setPatternType(LITERAL).build()), listFilters("--cluster", "--resource-pattern-type", "literal"));
    }

    @Test
    void filtersAreEveryResourceTimesPrincipalTimesHostTimesOperation() {
        assertEquals(List.of(
                        filter(TOPIC, "orders-", "User:alice", "10.0.0.1", READ),
                        filter(TOPIC, "orders-", "User:alice", "10.0.0.1", WRITE),
                        filter(TOPIC, "orders-", "User:bob", "10.0.0.1", READ),
                        filter(TOPIC, "orders-", "User:bob", "10.0.0.1", WRITE),
                        filter(GROUP, "orders-", "User:alice", "10.0.0.1", READ),
                        filter(GROUP, "orders-", "User:alice", "10.0.0.1", WRITE),
                        filter(GROUP, "orders-", "User:bob", "10.0.0.1", READ),
                        filter(GROUP, "orders-", "User:bob", "10.0.0.1", WRITE)),
                removeFilters("--principal", "User:alice", "--principal", "User:bob", "--host", "10.0.0.1",
                        "--operation", "read,write", "--topic", "orders-", "--group", "orders-",
                        "--resource-pattern-type", "prefixed", "--permission", "DENY"));
    }

    @Test
    void removeNeedsAFilterOrAll() {
        String noFilter = "acls remove without a filter flag would remove every ACL: give --principal, --host, "
                + "--permission, --operation, --topic, --group, --transactional-id, --cluster or "
                + "--resource-pattern-type literal|prefixed, or --all to remove every ACL";
        assertEquals(noFilter, removeError());
        assertEquals(noFilter, removeError("--resource-pattern-type", "any"));
        assertEquals(List.of(AclFilter.getDefaultInstance()), removeFilters("--all"));
        assertEquals("--all removes every ACL: give it without filter flags", removeError("--all", "--topic", "t"));
        assertEquals("--permission is 'maybe'; allowed: allow, deny", removeError("--permission", "maybe"));
        assertEquals("--resource-pattern-type is 'match'; allowed: any, literal, prefixed",
                removeError("--resource-pattern-type", "match"));
        assertEquals("--principal: 'alice' is not a principal; write TYPE:NAME, e.g. User:alice",
                removeError("--principal", "alice"));
        assertEquals("--operation is 'fly'; allowed: " + OPERATIONS, removeError("--operation", "fly"));
    }

    @Test
    void aUsageErrorExitsWithTwoBeforeReachingABroker() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exitCode = TidemarkCommand.commandLine(new PrintWriter(out), new PrintWriter(err)).execute("acls", "add",
                "--bootstrap", "127.0.0.1:1", "--allow-principal", "User:alice", "--operation", "read");
        assertEquals(2, exitCode);
        assertTrue(err.toString().startsWith("acls add needs a resource: --topic, --group, --transactional-id or "
                + "--cluster\nUsage: tidemark acls add "), err.toString());
        assertEquals("", out.toString());
    }

    @Test
    void printsATableOrOneJsonObjectPerBinding() {
        List<AclBinding> bindings = List.of(
                binding(TRANSACTIONAL_ID, "tx-", PREFIXED, "User:app", "", AclOperation.CLUSTER_ACTION, DENY),
                binding(TOPIC, "orders", LITERAL, "User:*", "10.0.0.1", READ, ALLOW));
        assertEquals("""
                RESOURCE-TYPE    NAME                             PATTERN  PRINCIPAL                HOST            \
                OPERATION        PERMISSION
                transactional-id tx-                              prefixed User:app                 *               \
                cluster-action   deny
                topic            orders                           literal  User:*                   10.0.0.1        \
                read             allow
                """, print(OutputFormat.text, bindings));
        assertEquals("""
                {"resourceType":"transactional-id","resourceName":"tx-","patternType":"prefixed",\
                "principal":"User:app","host":"*","operation":"cluster-action","permission":"deny"}
                {"resourceType":"topic","resourceName":"orders","patternType":"literal",\
                "principal":"User:*","host":"10.0.0.1","operation":"read","permission":"allow"}
                """, print(OutputFormat.json, bindings));
        assertEquals("", print(OutputFormat.text, List.of()));
    }

    private static List<AclBinding> add(String... args) {
        return parse(AclsCommand.Add.class, "add", args).bindings();
    }

    private static String addError(String... args) {
        return assertThrows(ParameterException.class, () -> add(args)).getMessage();
    }

    private static List<AclFilter> listFilters(String... args) {
        return parse(AclsCommand.ListAcls.class, "list", args).filter.filters();
    }

    private static List<AclFilter> removeFilters(String... args) {
        return parse(AclsCommand.Remove.class, "remove", args).filters();
    }

    private static String removeError(String... args) {
        return assertThrows(ParameterException.class, () -> removeFilters(args)).getMessage();
    }

    /** The {@code tidemark acls SUBCOMMAND args} command as parsed, not run. */
    private static <T> T parse(Class<T> type, String subcommand, String... args) {
        String[] line = new String[args.length + 1];
        line[0] = subcommand;
        System.arraycopy(args, 0, line, 1, args.length);
        return type.cast(new CommandLine(AclsCommand.class).parseArgs(line).subcommand().commandSpec().userObject());
    }

    private static String print(OutputFormat output, List<AclBinding> bindings) {
        StringWriter out = new StringWriter();
        try (PrintWriter writer = new PrintWriter(out)) {
            AclsCommand.print(writer, output, bindings);
        }
        return out.toString();
    }

    private static AclBinding binding(AclResourceType type, String name, AclPatternType pattern, String principal,
                                      String host, AclOperation operation, AclPermission permission) {
        return AclBinding.newBuilder().setResourceType(type).setResourceName(name).setPatternType(pattern)
                .setPrincipal(principal).setHost(host).setOperation(operation).setPermission(permission).build();
    }

    /** A filter of denying ACLs with prefixed patterns. */
    private static AclFilter filter(AclResourceType type, String name, String principal, String host,
                                    AclOperation operation) {
        return AclFilter.newBuilder().setResourceType(type).setResourceName(name).setPatternType(PREFIXED)
                .setPrincipal(principal).setHost(host).setOperation(operation).setPermission(DENY).build();
    }
}
