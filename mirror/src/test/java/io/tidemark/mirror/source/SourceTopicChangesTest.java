package io.tidemark.mirror.source;

import io.tidemark.mirror.source.SourceTopicChanges.Recreated;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** What a listing of the source's topics changes for the mirror, scripted listing after listing. */
class SourceTopicChangesTest {
    private static final Pattern ALL = Pattern.compile(".*");
    private static final UUID ORDERS_ID = new UUID(0, 1);
    private static final UUID ORDERS_RECREATED_ID = new UUID(0, 2);
    private static final UUID AUDIT_ID = new UUID(0, 3);

    private static Map<String, UUID> topics(Object... nameThenId) {
        Map<String, UUID> topics = new LinkedHashMap<>();
        for (int i = 0; i < nameThenId.length; i += 2) {
            topics.put((String) nameThenId[i], (UUID) nameThenId[i + 1]);
        }
        return topics;
    }

    @Test
    void newMatchingTopicsAreAddedInListingOrder() {
        assertEquals(new SourceTopicChanges(List.of("orders", "audit"), List.of(), List.of()),
                SourceTopicChanges.between(Map.of(), topics("orders", ORDERS_ID, "audit", AUDIT_ID), ALL));
        assertEquals(new SourceTopicChanges(List.of("orders"), List.of(), List.of()),
                SourceTopicChanges.between(Map.of(), topics("orders", ORDERS_ID, "audit", AUDIT_ID),
                        Pattern.compile("ord.*")), "the whole name must match");
    }

    @Test
    void aTopicListedAgainWithTheSameIdChangesNothing() {
        assertEquals(new SourceTopicChanges(List.of(), List.of(), List.of()), SourceTopicChanges.between(
                topics("orders", ORDERS_ID), topics("orders", ORDERS_ID), ALL));
    }

    @Test
    void aTopicListedWithAnotherIdWasCreatedAgain() {
        assertEquals(new SourceTopicChanges(List.of(), List.of(new Recreated("orders", ORDERS_ID,
                ORDERS_RECREATED_ID)), List.of()), SourceTopicChanges.between(topics("orders", ORDERS_ID,
                "audit", AUDIT_ID), topics("audit", AUDIT_ID, "orders", ORDERS_RECREATED_ID), ALL));
    }

    /** Deleted and created again between two listings, or seen in between: the same copies in the end. */
    @Test
    void aTopicNotListedIsRemovedAndComesBackAsAddedWhateverItsId() {
        assertEquals(new SourceTopicChanges(List.of(), List.of(), List.of("audit", "orders")),
                SourceTopicChanges.between(topics("orders", ORDERS_ID, "audit", AUDIT_ID), Map.of(), ALL));
        assertEquals(new SourceTopicChanges(List.of("orders"), List.of(), List.of()),
                SourceTopicChanges.between(Map.of(), topics("orders", ORDERS_RECREATED_ID), ALL));
    }
}
