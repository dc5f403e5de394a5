package io.tidemark.cli;

import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.core.auth.Principal;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.AclBinding;
import io.tidemark.proto.v1.AclFilter;
import io.tidemark.proto.v1.AclOperation;
import io.tidemark.proto.v1.AclPatternType;
import io.tidemark.proto.v1.AclPermission;
import io.tidemark.proto.v1.AclResourceType;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

/**
 * {@code tidemark acls add|remove|list}: the cluster's access control lists, as Kafka's {@code kafka-acls.sh} manages
 * them, through AdminService CreateAcls, DeleteAcls and DescribeAcls. {@code add} sends one binding for every
 * principal, host, operation and resource given (or for what the {@code --producer} and {@code --consumer} roles
 * need); {@code remove} and {@code list} send filters whose fields left unset match any value. Each subcommand turns
 * its flags into the request ({@link Add#bindings}, {@link FilterOptions#filters}) before it reaches a broker, so a
 * usage error sends nothing. Flags take the values of acl.proto's enums in lower case with '-' for '_'
 * ({@code cluster-action}; upper case is taken too), and the output spells them so.
 */
@Command(name = "acls", mixinStandardHelpOptions = true, description = "Add, remove and list ACLs: who may do what "
        + "on which topics, groups, transactional ids and the cluster.",
        subcommands = {AclsCommand.Add.class, AclsCommand.Remove.class, AclsCommand.ListAcls.class})
final class AclsCommand {
    /** The name of the cluster's one resource (acl.proto). */
    private static final String CLUSTER_RESOURCE = "tidemark-cluster";
    /** The host of a binding that holds from any address. */
    private static final String ANY_HOST = "*";

    private static final Map<String, AclOperation> OPERATIONS = byFlagName(Arrays.stream(AclOperation.values())
            .filter(o -> o != AclOperation.ACL_OPERATION_UNSPECIFIED && o != AclOperation.UNRECOGNIZED).toList());
    private static final Map<String, AclPermission> PERMISSIONS = byFlagName(
            List.of(AclPermission.ALLOW, AclPermission.DENY));
    private static final Map<String, AclPatternType> ADD_PATTERNS = byFlagName(
            List.of(AclPatternType.LITERAL, AclPatternType.PREFIXED));
    private static final Map<String, AclPatternType> FILTER_PATTERNS = filterPatterns();
    private static final String ROW = "%-16s %-32s %-8s %-24s %-15s %-16s %s%n";

    private AclsCommand() {
    }

    /** A resource the flags name. */
    private record Resource(AclResourceType type, String name) {
    }

    /** The resource flags every subcommand takes. */
    static final class ResourceOptions {
        @Option(names = "--topic", paramLabel = "TOPIC", description = "A topic (\"*\": the ACLs of every topic); "
                + "repeatable.")
        List<String> topics = new ArrayList<>();
        @Option(names = "--group", paramLabel = "GROUP", description = "A consumer group (\"*\": the ACLs of every "
                + "group); repeatable.")
        List<String> groups = new ArrayList<>();
        @Option(names = "--transactional-id", paramLabel = "ID", description = "A transactional id (\"*\": the ACLs "
                + "of every one); repeatable.")
        List<String> transactionalIds = new ArrayList<>();
        @Option(names = "--cluster", description = "The cluster (" + CLUSTER_RESOURCE + ").")
        boolean cluster;

        /** The resources named: the topics, the groups, the transactional ids, then the cluster. */
        List<Resource> resources() {
            List<Resource> resources = new ArrayList<>();
            topics.forEach(t -> resources.add(new Resource(AclResourceType.TOPIC, t)));
            groups.forEach(g -> resources.add(new Resource(AclResourceType.GROUP, g)));
            transactionalIds.forEach(x -> resources.add(new Resource(AclResourceType.TRANSACTIONAL_ID, x)));
            if (cluster) {
                resources.add(new Resource(AclResourceType.CLUSTER, CLUSTER_RESOURCE));
            }
            return resources;
        }
    }

    @Command(name = "add", mixinStandardHelpOptions = true, description = "Add ACLs: each principal given may "
            + "(--allow-principal) or may not (--deny-principal), from each of its hosts, do each operation given on "
            + "each resource given. Prints the ACLs sent; those the cluster held already stay as they were.")
    static final class Add implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--allow-principal", paramLabel = "TYPE:NAME", description = "A principal the ACLs allow: "
                + "User:NAME, or User:* for every principal; repeatable.")
        List<String> allowPrincipals = new ArrayList<>();
        @Option(names = "--deny-principal", paramLabel = "TYPE:NAME", description = "A principal the ACLs deny (a "
                + "DENY wins over every ALLOW); repeatable.")
        List<String> denyPrincipals = new ArrayList<>();
        @Option(names = "--allow-host", paramLabel = "HOST", description = "An IP address the allowed principals "
                + "are allowed from (default: " + ANY_HOST + ", any); repeatable.")
        List<String> allowHosts = new ArrayList<>();
        @Option(names = "--deny-host", paramLabel = "HOST", description = "An IP address the denied principals are "
                + "denied from (default: " + ANY_HOST + ", any); repeatable.")
        List<String> denyHosts = new ArrayList<>();
        @Option(names = "--operation", split = ",", paramLabel = "OP", description = "all, read, write, create, "
                + "delete, alter, describe, cluster-action or idempotent-write; repeatable or comma-separated.")
        List<String> operations = new ArrayList<>();
        @Mixin
        ResourceOptions resources;
        @Option(names = "--resource-pattern-type", defaultValue = "literal", paramLabel = "literal|prefixed",
                description = "literal: the resources of exactly the names given; prefixed: every resource whose "
                        + "name starts with one (default: ${DEFAULT-VALUE}; the cluster's ACLs are literal).")
        String patternType;
        @Option(names = "--producer", description = "Instead of --operation, allow what a producer needs: write, "
                + "describe and create on --topic; write and describe on --transactional-id.")
        boolean producer;
        @Option(names = "--idempotent", description = "With --producer: allow idempotent-write on the cluster too "
                + "(an idempotent producer without a transactional id).")
        boolean idempotent;
        @Option(names = "--consumer", description = "Instead of --operation, allow what a consumer needs: read and "
                + "describe on --topic; read on --group.")
        boolean consumer;
        @Option(names = "--output", defaultValue = "text", description = "text or json.")
        OutputFormat output;

        @Override
        public Integer call() {
            List<AclBinding> bindings = bindings();
            try (TidemarkAdmin admin = client.admin()) {
                admin.createAcls(bindings);
            }
            PrintWriter out = spec.commandLine().getOut();
            if (output == OutputFormat.text) {
                out.printf("Added %d ACL(s):%n", bindings.size());
            }
            print(out, output, bindings);
            return 0;
        }

        /**
         * The bindings the flags ask for: for each resource (as {@link ResourceOptions#resources} orders them) the
         * ALLOW bindings, then the DENY ones, each by principal, host and operation, in the order given.
         *
         * @throws ParameterException naming the flag that is missing, wrong or out of place
         */
        List<AclBinding> bindings() {
            List<Principal> allowed = principals(spec, "--allow-principal", allowPrincipals);
            List<Principal> denied = principals(spec, "--deny-principal", denyPrincipals);
            if (allowed.isEmpty() && denied.isEmpty()) {
                throw usage(spec, "acls add needs a principal: --allow-principal or --deny-principal TYPE:NAME "
                        + "(User:alice, or User:* for every principal)");
            }
            if (!allowHosts.isEmpty() && allowed.isEmpty()) {
                throw usage(spec, "--allow-host needs --allow-principal: the principals allowed from it");
            }
            if (!denyHosts.isEmpty() && denied.isEmpty()) {
                throw usage(spec, "--deny-host needs --deny-principal: the principals denied from it");
            }
            if (idempotent && !producer) {
                throw usage(spec, "--idempotent goes with --producer");
            }
            Map<Resource, Set<AclOperation>> grants = producer || consumer ? roleGrants(denied) : operationGrants();
            AclPatternType pattern = choice(spec, "--resource-pattern-type", patternType, ADD_PATTERNS);
            Set<AclBinding> bindings = new LinkedHashSet<>();
            grants.forEach((resource, granted) -> {
                add(bindings, resource, pattern, allowed, hosts(allowHosts), granted, AclPermission.ALLOW);
                add(bindings, resource, pattern, denied, hosts(denyHosts), granted, AclPermission.DENY);
            });
            return List.copyOf(bindings);
        }

        /** Each resource given with the operations given. */
        private Map<Resource, Set<AclOperation>> operationGrants() {
            if (operations.isEmpty()) {
                throw usage(spec, "acls add needs --operation OP (" + String.join(", ", OPERATIONS.keySet())
                        + "), or --producer or --consumer");
            }
            Set<AclOperation> granted = operations(spec, operations);
            List<Resource> named = resources.resources();
            if (named.isEmpty()) {
                throw usage(spec, "acls add needs a resource: --topic, --group, --transactional-id or --cluster");
            }
            Map<Resource, Set<AclOperation>> grants = new LinkedHashMap<>();
            named.forEach(resource -> grants.put(resource, granted));
            return grants;
        }

        /** What --producer and --consumer allow, on the resources each of them takes; Kafka's roles. */
        private Map<Resource, Set<AclOperation>> roleGrants(List<Principal> denied) {
            if (!operations.isEmpty()) {
                throw usage(spec, "--producer and --consumer choose the operations themselves: leave --operation out");
            }
            if (!denied.isEmpty()) {
                throw usage(spec, "--producer and --consumer add ALLOW ACLs only: leave --deny-principal out");
            }
            if (resources.topics.isEmpty()) {
                throw usage(spec, (producer ? "--producer" : "--consumer") + " needs --topic");
            }
            if (consumer && resources.groups.isEmpty()) {
                throw usage(spec, "--consumer needs --group: the consumer group it reads as");
            }
            if (resources.cluster) {
                throw usage(spec, "--producer and --consumer take no --cluster (--producer --idempotent allows "
                        + "idempotent-write on the cluster)");
            }
            if (!producer && !resources.transactionalIds.isEmpty()) {
                throw usage(spec, "--transactional-id goes with --producer, not with --consumer alone");
            }
            if (!consumer && !resources.groups.isEmpty()) {
                throw usage(spec, "--group goes with --consumer, not with --producer alone");
            }
            Map<Resource, Set<AclOperation>> grants = new LinkedHashMap<>();
            if (producer) {
                grant(grants, AclResourceType.TOPIC, resources.topics, AclOperation.WRITE, AclOperation.DESCRIBE,
                        AclOperation.CREATE);
                grant(grants, AclResourceType.TRANSACTIONAL_ID, resources.transactionalIds, AclOperation.WRITE,
                        AclOperation.DESCRIBE);
                if (idempotent) {
                    grant(grants, AclResourceType.CLUSTER, List.of(CLUSTER_RESOURCE), AclOperation.IDEMPOTENT_WRITE);
                }
            }
            if (consumer) {
                grant(grants, AclResourceType.TOPIC, resources.topics, AclOperation.READ, AclOperation.DESCRIBE);
                grant(grants, AclResourceType.GROUP, resources.groups, AclOperation.READ);
            }
            return grants;
        }

        private static void grant(Map<Resource, Set<AclOperation>> grants, AclResourceType type, List<String> names,
                                  AclOperation... operations) {
            for (String name : names) {
                grants.computeIfAbsent(new Resource(type, name), r -> new LinkedHashSet<>())
                        .addAll(List.of(operations));
            }
        }

        private static List<String> hosts(List<String> given) {
            return given.isEmpty() ? List.of(ANY_HOST) : given;
        }

        private static void add(Set<AclBinding> bindings, Resource resource, AclPatternType pattern,
                                List<Principal> principals, List<String> hosts, Set<AclOperation> operations,
                                AclPermission permission) {
            // The cluster is one resource: a prefix of its name would name nothing else.
            AclPatternType resourcePattern = resource.type() == AclResourceType.CLUSTER ? AclPatternType.LITERAL
                    : pattern;
            for (Principal principal : principals) {
                for (String host : hosts) {
                    for (AclOperation operation : operations) {
                        bindings.add(AclBinding.newBuilder().setResourceType(resource.type())
                                .setResourceName(resource.name()).setPatternType(resourcePattern)
                                .setPrincipal(principal.toString()).setHost(host).setOperation(operation)
                                .setPermission(permission).build());
                    }
                }
            }
        }
    }

    /** The filter flags of {@code remove} and {@code list}; a flag left out matches any value. */
    static final class FilterOptions {
        @Spec(Spec.Target.MIXEE)
        CommandSpec spec;
        @Option(names = "--principal", paramLabel = "TYPE:NAME", description = "ACLs of this principal (User:* "
                + "matches the ACLs for every principal, not every principal's); repeatable.")
        List<String> principals = new ArrayList<>();
        @Option(names = "--host", paramLabel = "HOST", description = "ACLs holding from this IP address (" + ANY_HOST
                + ": those holding from any); repeatable.")
        List<String> hosts = new ArrayList<>();
        @Option(names = "--permission", paramLabel = "allow|deny", description = "ACLs that allow, or that deny.")
        String permission;
        @Option(names = "--operation", split = ",", paramLabel = "OP", description = "ACLs of this operation: all, "
                + "read, write, create, delete, alter, describe, cluster-action or idempotent-write; repeatable or "
                + "comma-separated.")
        List<String> operations = new ArrayList<>();
        @Mixin
        ResourceOptions resources;
        @Option(names = "--resource-pattern-type", defaultValue = "any", paramLabel = "any|literal|prefixed",
                description = "ACLs of this pattern type (default: ${DEFAULT-VALUE}).")
        String patternType;

        /**
         * One filter for each combination of the principals, hosts, operations and resources given, resources
         * outermost; a field whose flag is left out stays unset. Without flags, the one filter that matches every ACL.
         *
         * @throws ParameterException naming the flag whose value is wrong
         */
        List<AclFilter> filters() {
            List<String> principalValues = principals.isEmpty() ? List.of("")
                    : principals(spec, "--principal", principals).stream().map(Principal::toString).toList();
            List<String> hostValues = hosts.isEmpty() ? List.of("") : hosts;
            Collection<AclOperation> operationValues = operations.isEmpty()
                    ? List.of(AclOperation.ACL_OPERATION_UNSPECIFIED) : operations(spec, operations);
            AclPermission permissionValue = permission == null ? AclPermission.ACL_PERMISSION_UNSPECIFIED
                    : choice(spec, "--permission", permission, PERMISSIONS);
            AclPatternType pattern = choice(spec, "--resource-pattern-type", patternType, FILTER_PATTERNS);
            List<Resource> named = resources.resources();
            if (named.isEmpty()) {
                named = List.of(new Resource(AclResourceType.ACL_RESOURCE_TYPE_UNSPECIFIED, ""));
            }
            Set<AclFilter> filters = new LinkedHashSet<>();
            for (Resource resource : named) {
                for (String principal : principalValues) {
                    for (String host : hostValues) {
                        for (AclOperation operation : operationValues) {
                            filters.add(AclFilter.newBuilder().setResourceType(resource.type())
                                    .setResourceName(resource.name()).setPatternType(pattern).setPrincipal(principal)
                                    .setHost(host).setOperation(operation).setPermission(permissionValue).build());
                        }
                    }
                }
            }
            return List.copyOf(filters);
        }
    }

    @Command(name = "remove", mixinStandardHelpOptions = true, description = "Remove the ACLs the filter flags "
            + "match (a flag left out matches any value) and print them; --all, without filter flags, removes every "
            + "ACL.")
    static final class Remove implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Mixin
        FilterOptions filter;
        @Option(names = "--all", description = "Remove every ACL of the cluster; taken only without filter flags.")
        boolean all;
        @Option(names = "--output", defaultValue = "text", description = "text or json.")
        OutputFormat output;

        @Override
        public Integer call() {
            List<AclFilter> filters = filters();
            List<AclBinding> removed;
            try (TidemarkAdmin admin = client.admin()) {
                removed = admin.deleteAcls(filters);
            }
            PrintWriter out = spec.commandLine().getOut();
            if (output == OutputFormat.text) {
                out.printf("Removed %d ACL(s)%s%n", removed.size(), removed.isEmpty() ? "" : ":");
            }
            print(out, output, removed);
            return 0;
        }

        /**
         * The filters of DeleteAcls; one that matches every ACL only with --all.
         *
         * @throws ParameterException when --all and filter flags are both given, or neither
         */
        List<AclFilter> filters() {
            List<AclFilter> filters = filter.filters();
            boolean matchesAll = filters.equals(List.of(AclFilter.getDefaultInstance()));
            if (all && !matchesAll) {
                throw usage(spec, "--all removes every ACL: give it without filter flags");
            }
            if (!all && matchesAll) {
                throw usage(spec, "acls remove without a filter flag would remove every ACL: give --principal, "
                        + "--host, --permission, --operation, --topic, --group, --transactional-id, --cluster or "
                        + "--resource-pattern-type literal|prefixed, or --all to remove every ACL");
            }
            return filters;
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "List the ACLs the filter flags match "
            + "(a flag left out matches any value; every ACL without any), sorted by resource type, name, pattern "
            + "type, principal, host, operation and permission; several values of a flag (two --topic, say) are "
            + "listed one after the other.")
    static final class ListAcls implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Mixin
        FilterOptions filter;
        @Option(names = "--output", defaultValue = "text", description = "text or json.")
        OutputFormat output;

        @Override
        public Integer call() {
            List<AclFilter> filters = filter.filters();
            List<AclBinding> found = new ArrayList<>();
            try (TidemarkAdmin admin = client.admin()) {
                for (AclFilter f : filters) {
                    found.addAll(admin.describeAcls(f));
                }
            }
            print(spec.commandLine().getOut(), output, found);
            return 0;
        }
    }

    /** Prints bindings: a table (none without bindings) for text, one object a line for json. */
    static void print(PrintWriter out, OutputFormat output, Collection<AclBinding> bindings) {
        if (output == OutputFormat.text && !bindings.isEmpty()) {
            out.printf(ROW, "RESOURCE-TYPE", "NAME", "PATTERN", "PRINCIPAL", "HOST", "OPERATION", "PERMISSION");
        }
        for (AclBinding binding : bindings) {
            String host = binding.getHost().isEmpty() ? ANY_HOST : binding.getHost();
            if (output == OutputFormat.json) {
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("resourceType", flagName(binding.getResourceType()));
                row.put("resourceName", binding.getResourceName());
                row.put("patternType", flagName(binding.getPatternType()));
                row.put("principal", binding.getPrincipal());
                row.put("host", host);
                row.put("operation", flagName(binding.getOperation()));
                row.put("permission", flagName(binding.getPermission()));
                JsonLines.print(out, row);
            } else {
                out.printf(ROW, flagName(binding.getResourceType()), binding.getResourceName(),
                        flagName(binding.getPatternType()), binding.getPrincipal(), host,
                        flagName(binding.getOperation()), flagName(binding.getPermission()));
            }
        }
    }

    /** How flags and output spell an acl.proto enum value: {@code CLUSTER_ACTION} is {@code cluster-action}. */
    private static String flagName(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    private static <E extends Enum<E>> Map<String, E> byFlagName(List<E> values) {
        return Collections.unmodifiableMap(values.stream().collect(Collectors.toMap(AclsCommand::flagName, v -> v,
                (a, b) -> a, LinkedHashMap::new)));
    }

    private static Map<String, AclPatternType> filterPatterns() {
        Map<String, AclPatternType> patterns = new LinkedHashMap<>();
        patterns.put("any", AclPatternType.ACL_PATTERN_TYPE_UNSPECIFIED);
        patterns.putAll(ADD_PATTERNS);
        return Collections.unmodifiableMap(patterns);
    }

    /** The --operation values, each once, in the order given. */
    private static Set<AclOperation> operations(CommandSpec spec, List<String> names) {
        Set<AclOperation> operations = new LinkedHashSet<>();
        names.forEach(name -> operations.add(choice(spec, "--operation", name.trim(), OPERATIONS)));
        return operations;
    }

    private static List<Principal> principals(CommandSpec spec, String option, List<String> texts) {
        List<Principal> principals = new ArrayList<>();
        for (String text : texts) {
            try {
                principals.add(Principal.parse(text, option));
            } catch (TidemarkException e) {
                throw usage(spec, e.getMessage());
            }
        }
        return principals;
    }

    /** The value {@code text} names among {@code allowed} (any case). */
    private static <E> E choice(CommandSpec spec, String option, String text, Map<String, E> allowed) {
        E value = allowed.get(text.toLowerCase(Locale.ROOT));
        if (value == null) {
            throw usage(spec, option + " is '" + text + "'; allowed: " + String.join(", ", allowed.keySet()));
        }
        return value;
    }

    private static ParameterException usage(CommandSpec spec, String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
