package io.tidemark.mirror.source;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * What one listing of the source's topics changes for a mirror, against the topics it copies, each known by its name
 * and the id of the topic it copies (a topic deleted and created again under its name has another id, and its offsets
 * start again):
 *
 * @param added     listed topics whose whole name matches {@code --topics} and that are not copied yet, in listing
 *                  order
 * @param recreated copied topics listed with another id: the topic copied is gone and a new one has its name. Its
 *                  copiers stop, and its partitions are copied afresh as a new origin; sorted by name
 * @param removed   copied topics not listed any more, sorted by name
 */
public record SourceTopicChanges(List<String> added, List<Recreated> recreated, List<String> removed) {
    /** A copied topic, of id {@code copiedId}, that the source now lists with {@code listedId}. */
    public record Recreated(String topic, UUID copiedId, UUID listedId) {
    }

    public SourceTopicChanges {
        added = List.copyOf(added);
        recreated = List.copyOf(recreated);
        removed = List.copyOf(removed);
    }

    /**
     * The changes between the topics copied and a listing. Pure: no I/O, no clock.
     *
     * @param copied each copied topic's name and the id of the topic copied
     * @param listed the source's topics (internal ones excluded), name to id, in listing order
     * @param topics the {@code --topics} pattern a name must match whole
     */
    public static SourceTopicChanges between(Map<String, UUID> copied, Map<String, UUID> listed, Pattern topics) {
        List<String> added = new ArrayList<>();
        listed.forEach((name, id) -> {
            if (!copied.containsKey(name) && topics.matcher(name).matches()) {
                added.add(name);
            }
        });
        List<Recreated> recreated = new ArrayList<>();
        List<String> removed = new ArrayList<>();
        copied.keySet().stream().sorted().forEach(name -> {
            UUID listedId = listed.get(name);
            if (listedId == null) {
                removed.add(name);
            } else if (!Objects.equals(listedId, copied.get(name))) {
                recreated.add(new Recreated(name, copied.get(name), listedId));
            }
        });
        return new SourceTopicChanges(added, recreated, removed);
    }
}
