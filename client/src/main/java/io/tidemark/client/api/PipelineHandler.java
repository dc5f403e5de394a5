package io.tidemark.client.api;

/**
 * A handler that also writes records: what it sends through {@link Output} belongs to the record's handling. In the
 * runtime's Transactional mode the records go into the open transaction with the consumed positions, so they become
 * visible to read_committed readers exactly when the input's position is committed; in the other modes the record
 * completes only once everything it sent is stored (at least once). A plain {@link RecordHandler} is a pipeline
 * handler that sends nothing.
 */
@FunctionalInterface
public interface PipelineHandler {
    Outcome handle(ConsumerRecord record, Output output) throws Exception;

    /** Where a handler sends the records its input produces; valid while the handler runs. */
    interface Output {
        /**
         * Sends {@code record} with the runtime's producer.
         *
         * @throws IllegalStateException after the handler returned, or when the runtime has no producer
         */
        void send(ProducerRecord record);
    }
}
