package io.tidemark.core.auth;

import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import io.tidemark.proto.v1.AdminServiceGrpc;
import io.tidemark.proto.v1.BrokerServiceGrpc;
import io.tidemark.proto.v1.ClusterServiceGrpc;
import io.tidemark.proto.v1.GroupServiceGrpc;
import io.tidemark.proto.v1.ReplicaServiceGrpc;
import io.tidemark.proto.v1.TransactionServiceGrpc;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class AccessRulesTest {
    @Test
    void everyMethodOfEveryServiceHasARule() {
        AccessRules rules = AccessRules.tidemark();
        List<String> missing = List.of(BrokerServiceGrpc.getServiceDescriptor(),
                        AdminServiceGrpc.getServiceDescriptor(), GroupServiceGrpc.getServiceDescriptor(),
                        TransactionServiceGrpc.getServiceDescriptor(), ClusterServiceGrpc.getServiceDescriptor(),
                        ReplicaServiceGrpc.getServiceDescriptor()).stream()
                .map(ServiceDescriptor::getMethods).flatMap(java.util.Collection::stream)
                .map(MethodDescriptor::getFullMethodName).filter(name -> rules.rule(name).isEmpty()).toList();
        assertEquals(List.of(), missing);
    }
}
