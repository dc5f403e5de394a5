package io.tidemark.replication.snapshot;

import io.tidemark.core.log.AppendState;
import io.tidemark.core.log.HeldOrigin;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.AbortedTransaction;
import io.tidemark.proto.v1.AppendStateSnapshot;
import io.tidemark.proto.v1.OpenTransactionSnapshot;
import io.tidemark.proto.v1.OriginSnapshot;
import io.tidemark.proto.v1.ProducerSnapshot;
import io.tidemark.proto.v1.StoredBatchSnapshot;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * A partition's {@link AppendState} as a group snapshot keeps it ({@link AppendStateSnapshot}, replica.proto), and
 * back. Origins are written in a fixed order (cluster, topic, topic id, partition), so two replicas in the same state
 * write the same bytes.
 *
 * <p>Stateless.
 */
public final class AppendStateSnapshots {
    private static final Comparator<OriginPartition> ORIGIN_ORDER = Comparator.comparing(OriginPartition::cluster)
            .thenComparing(OriginPartition::topic).thenComparing(OriginPartition::topicId)
            .thenComparingInt(OriginPartition::partition);

    private AppendStateSnapshots() {
    }

    public static AppendStateSnapshot toProto(AppendState state) {
        AppendStateSnapshot.Builder proto = AppendStateSnapshot.newBuilder();
        state.lastReceiveTimeMs().ifPresent(proto::setLastReceiveTimeMs);
        for (AppendState.Producer producer : state.producers()) {
            ProducerSnapshot.Builder p = proto.addProducersBuilder().setProducerId(producer.producerId())
                    .setEpoch(producer.epoch()).setLastReceiveTimeMs(producer.lastReceiveTimeMs());
            if (producer.coordinatorEpoch() != AppendState.Producer.NO_COORDINATOR_EPOCH) {
                p.setCoordinatorEpoch(producer.coordinatorEpoch());
            }
            for (AppendState.StoredBatch batch : producer.batches()) {
                p.addBatches(StoredBatchSnapshot.newBuilder().setFirstSequence(batch.firstSequence())
                        .setLastSequence(batch.lastSequence()).setBaseOffset(batch.baseOffset())
                        .setLastOffset(batch.lastOffset()).setReceiveTimeMs(batch.receiveTimeMs()));
            }
        }
        List<OriginPartition> origins = new ArrayList<>(state.origins().keySet());
        origins.sort(ORIGIN_ORDER);
        for (OriginPartition origin : origins) {
            HeldOrigin held = state.origins().get(origin);
            proto.addOrigins(OriginSnapshot.newBuilder().setCluster(origin.cluster()).setTopic(origin.topic())
                    .setTopicId(TopicIds.toBytes(origin.topicId())).setPartition(origin.partition())
                    .setOriginOffset(held.originOffset()).setOffset(held.offset()));
        }
        for (AppendState.OpenTransaction open : state.openTransactions()) {
            proto.addOpenTransactions(OpenTransactionSnapshot.newBuilder().setProducerId(open.producerId())
                    .setFirstOffset(open.firstOffset()));
        }
        for (AppendState.AbortedTransaction aborted : state.abortedTransactions()) {
            proto.addAbortedTransactions(AbortedTransaction.newBuilder().setProducerId(aborted.producerId())
                    .setFirstOffset(aborted.firstOffset()).setLastOffset(aborted.lastOffset()));
        }
        return proto.build();
    }

    /**
     * The state a snapshot keeps of a partition whose log ends at {@code logEndOffset}.
     *
     * @throws IllegalArgumentException when a value is out of its range (a snapshot file this broker cannot read)
     */
    public static AppendState fromProto(long logEndOffset, AppendStateSnapshot proto) {
        List<AppendState.Producer> producers = new ArrayList<>(proto.getProducersCount());
        for (ProducerSnapshot p : proto.getProducersList()) {
            List<AppendState.StoredBatch> batches = new ArrayList<>(p.getBatchesCount());
            for (StoredBatchSnapshot b : p.getBatchesList()) {
                batches.add(new AppendState.StoredBatch(b.getFirstSequence(), b.getLastSequence(), b.getBaseOffset(),
                        b.getLastOffset(), b.getReceiveTimeMs()));
            }
            if (p.getEpoch() < Short.MIN_VALUE || p.getEpoch() > Short.MAX_VALUE) {
                throw new IllegalArgumentException("producer " + p.getProducerId() + " has epoch " + p.getEpoch()
                        + ", outside int16");
            }
            if (batches.isEmpty() && !p.hasLastReceiveTimeMs()) {
                throw new IllegalArgumentException("producer " + p.getProducerId() + " has neither batches nor the "
                        + "time it was last heard of");
            }
            producers.add(new AppendState.Producer(p.getProducerId(), (short) p.getEpoch(), batches,
                    p.hasLastReceiveTimeMs() ? p.getLastReceiveTimeMs() : batches.get(batches.size() - 1)
                            .receiveTimeMs(), p.hasCoordinatorEpoch() ? p.getCoordinatorEpoch()
                    : AppendState.Producer.NO_COORDINATOR_EPOCH));
        }
        Map<OriginPartition, HeldOrigin> origins = new HashMap<>();
        for (OriginSnapshot o : proto.getOriginsList()) {
            origins.put(new OriginPartition(o.getCluster(), o.getTopic(), TopicIds.fromBytes(o.getTopicId()),
                    o.getPartition()), new HeldOrigin(o.getOriginOffset(), o.getOffset()));
        }
        List<AppendState.OpenTransaction> open = new ArrayList<>(proto.getOpenTransactionsCount());
        for (OpenTransactionSnapshot o : proto.getOpenTransactionsList()) {
            open.add(new AppendState.OpenTransaction(o.getProducerId(), o.getFirstOffset()));
        }
        List<AppendState.AbortedTransaction> aborted = new ArrayList<>(proto.getAbortedTransactionsCount());
        for (AbortedTransaction a : proto.getAbortedTransactionsList()) {
            aborted.add(new AppendState.AbortedTransaction(a.getProducerId(), a.getFirstOffset(), a.getLastOffset()));
        }
        return new AppendState(logEndOffset, proto.hasLastReceiveTimeMs()
                ? OptionalLong.of(proto.getLastReceiveTimeMs()) : OptionalLong.empty(), producers, origins, open,
                aborted);
    }
}
