package io.tidemark.cli;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class MirrorRunTest {
    @Test
    void ratesRunFromTheFirstRecordOfAnyPartitionToTheLastAndBytesCountAsOnTheSource() {
        MirrorRun run = new MirrorRun(List.of(
                new MirrorRun.Partition(600, 600_000, 624_000, 1_000, 9_000),
                new MirrorRun.Partition(400, 400_000, 416_000, 2_000, 11_000),
                new MirrorRun.Partition(0, 0, 0, -1, -1)));
        assertEquals(1_000, run.records());
        assertEquals(10_000, run.firstToLastMs(), "the empty partition's -1 counts for neither end");
        assertEquals("1000 records on the target, first to last in 10.0 s: 100 records/s, 0.1 MB/s of source bytes; "
                + "bytes on the target 1040000, on the source 1000000 (+4.0%)", run.summary());
    }

    @Test
    void nothingCopiedIsZeroNotADivisionByZero() {
        MirrorRun run = new MirrorRun(List.of(new MirrorRun.Partition(0, 0, 0, -1, -1)));
        assertEquals(0, run.firstToLastMs());
        assertEquals("0 records on the target, first to last in 0.0 s: 0 records/s, 0.0 MB/s of source bytes; "
                + "bytes on the target 0, on the source 0 (+0.0%)", run.summary());
    }
}
