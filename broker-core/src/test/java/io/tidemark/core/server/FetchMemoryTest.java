package io.tidemark.core.server;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FetchMemoryTest {
    @Test
    void aFetchGetsWhatItAsksWhileThereIsRoomThenWhatIsLeftThenARefusal() {
        FetchMemory memory = new FetchMemory(1000);
        FetchMemory.Lease first = memory.lease();
        FetchMemory.Lease second = memory.lease();
        FetchMemory.Lease third = memory.lease();
        assertEquals(600, first.take(600));
        assertEquals(400, second.take(600), "the room left");
        assertEquals(1000, memory.heldBytes());
        TidemarkException refused = assertThrows(TidemarkException.class, () -> third.take(600));
        assertEquals(ErrorCode.NOT_AVAILABLE, refused.code());
        assertTrue(refused.getMessage().contains("holds 1000 bytes of fetch answers not sent yet, all of "
                + "fetch.memory.max.bytes 1000"), refused.getMessage());
        first.close();
        assertEquals(400, memory.heldBytes());
        assertEquals(600, third.take(600), "room given back is taken again");
    }

    @Test
    void aReadHoldsWhatItReturnedSmallerOrALargerFirstBatch() {
        FetchMemory memory = new FetchMemory(1000);
        FetchMemory.Lease small = memory.lease();
        small.take(500);
        small.settle(120);
        assertEquals(120, memory.heldBytes(), "a short read gives back what it did not use");
        FetchMemory.Lease large = memory.lease();
        large.take(100);
        large.settle(1500);
        assertEquals(1620, memory.heldBytes(), "one whole first batch larger than the room is held as it is");
        assertThrows(TidemarkException.class, () -> memory.lease().take(1), "over the bound: nothing more");
        large.close();
        small.close();
        assertEquals(0, memory.heldBytes());
    }

    @Test
    void closingTwiceOrBeforeTheReadGivesBackOnlyWhatWasHeld() {
        FetchMemory memory = new FetchMemory(1000);
        FetchMemory.Lease lease = memory.lease();
        lease.take(300);
        lease.close();
        lease.close();
        lease.settle(300);
        assertEquals(0, memory.heldBytes(), "a read that ends after the call was cancelled holds nothing");
        FetchMemory.Lease cancelled = memory.lease();
        cancelled.close();
        TidemarkException refused = assertThrows(TidemarkException.class, () -> cancelled.take(100));
        assertEquals("the fetch was cancelled", refused.getMessage());
        assertEquals(0, memory.heldBytes());
    }
}
