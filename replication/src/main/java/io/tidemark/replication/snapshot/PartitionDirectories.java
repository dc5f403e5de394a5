package io.tidemark.replication.snapshot;

import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.GroupPartition;

import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a group keeps a hosted partition's log: {@code partitions/TOPIC-PARTITION-TOPICID/} in its state machine
 * directory (and, for a copy under way, in its staged install). The topic's id tells a topic deleted and created
 * again under its name from the old one; its name and partition make the directory easy to find.
 *
 * <p>Files set aside by the entry at Raft index {@code I} (a partition removed, or its copy started again, while the
 * latest snapshot names it) are in {@code TOPIC-PARTITION-TOPICID.before-I} (its files before entry {@code I})
 * until a snapshot no longer names them.
 */
public final class PartitionDirectories {
    public static final String PARTITIONS = "partitions";
    private static final String SET_ASIDE = ".before-";
    private static final Pattern SET_ASIDE_NAME = Pattern.compile("(.+)\\.before-(\\d+)");

    private PartitionDirectories() {
    }

    public static String name(GroupPartition partition) {
        return partition.getTopic() + "-" + partition.getPartition() + "-"
                + TopicIds.fromBytes(partition.getTopicId());
    }

    /** Where the entry at {@code index} sets aside the files of the partition in {@code dir}. */
    public static Path setAside(Path dir, long index) {
        return dir.resolveSibling(dir.getFileName() + SET_ASIDE + index);
    }

    /** The index of the entry that set aside {@code dir}, whichever partition's files it holds; empty when none did. */
    public static OptionalLong setAsideIndex(Path dir) {
        Matcher m = SET_ASIDE_NAME.matcher(dir.getFileName().toString());
        return m.matches() ? OptionalLong.of(Long.parseLong(m.group(2))) : OptionalLong.empty();
    }

    /** The index of the entry that set aside {@code dir}, when it holds files of partition directory {@code name}. */
    public static OptionalLong setAsideIndex(Path dir, String name) {
        Matcher m = SET_ASIDE_NAME.matcher(dir.getFileName().toString());
        return m.matches() && m.group(1).equals(name) ? OptionalLong.of(Long.parseLong(m.group(2)))
                : OptionalLong.empty();
    }
}
