package io.tidemark.client.api;

/**
 * The application's work on one record, run by a {@link ConsumerRuntime} on one of its workers. A handler that
 * throws counts as {@link Outcome#retry()} where a retry path is declared, else as the runtime's
 * {@link ConsumerRuntime.HandlerErrors} say.
 */
@FunctionalInterface
public interface RecordHandler {
    Outcome handle(ConsumerRecord record) throws Exception;
}
