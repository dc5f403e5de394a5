package io.tidemark.proto.record;

/** A record inside a batch does not follow {@link RecordBatchFormat}; the validator adds which record. */
final class RecordFormatException extends RuntimeException {
    RecordFormatException(String message) {
        super(message, null, false, false);
    }
}
