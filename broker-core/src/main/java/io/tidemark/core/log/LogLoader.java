package io.tidemark.core.log;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.file.OpenFileCache;
import io.tidemark.proto.record.RecordBatchValidator;
import io.tidemark.core.log.segment.LogSegment;
import io.tidemark.core.log.segment.SegmentLoader;
import io.tidemark.core.log.segment.SegmentRecovery;
import io.tidemark.core.log.segment.SegmentSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Opens the segments of a partition directory and decides which to trust:
 * <ul>
 *   <li>After a clean shutdown ({@link PartitionLog#CLEAN_SHUTDOWN_FILE} present) every segment is loaded
 *       from its indexes ({@link SegmentLoader}); one whose indexes are missing, short or inconsistent is
 *       recovered.</li>
 *   <li>Otherwise the segments holding offsets at or above the recovery point ({@link RecoveryPointFile}) are
 *       recovered ({@link SegmentRecovery}): every batch checked, indexes rebuilt, a torn or corrupt tail
 *       truncated. When a segment before the last loses batches, the segments after it are deleted, since a
 *       log has no gaps; the loss is logged as an error.</li>
 * </ul>
 * Index files and compaction markers without a log file are deleted, and so is what an interrupted compaction left
 * in its staging directory ({@link LogCompactor}). A gap between two segments that recovery did not make is
 * refused: it means files were removed by hand, and deciding what to do is the operator's.
 */
final class LogLoader {
    private static final Logger LOG = LoggerFactory.getLogger(LogLoader.class);
    private static final Pattern SEGMENT_FILE = Pattern.compile(
            "(\\d{20})(\\.log|\\.index|\\.timeindex|\\.sendindex|\\.compacted)");

    private LogLoader() {
    }

    static LogSegment[] load(Path dir, TopicConfig config, OpenFileCache files) throws IOException {
        boolean clean = Files.deleteIfExists(dir.resolve(PartitionLog.CLEAN_SHUTDOWN_FILE));
        DurableFiles.deleteTree(LogCompactor.stagingDir(dir));
        List<Long> bases = segmentBases(dir);
        SegmentSettings settings = SegmentSettings.of(config, files);
        if (bases.isEmpty()) {
            return new LogSegment[] {LogSegment.create(dir, 0, settings)};
        }
        long recoveryPoint = clean ? Long.MAX_VALUE : RecoveryPointFile.read(dir).orElse(0);
        RecordBatchValidator validator = new RecordBatchValidator();
        List<LogSegment> loaded = new ArrayList<>();
        long previousMaxReceiveTime = LogSegment.NO_TIME;
        boolean recovered = false;
        for (int i = 0; i < bases.size(); i++) {
            boolean last = i == bases.size() - 1;
            LogSegment segment = LogSegment.open(dir, bases.get(i), settings, last);
            if (!loaded.isEmpty() && loaded.get(loaded.size() - 1).nextOffset() != segment.baseOffset()) {
                segment.close();
                loaded.forEach(LogSegment::close);
                throw new IOException("the log in " + dir + " has a gap: a segment ends at offset "
                        + loaded.get(loaded.size() - 1).nextOffset() + " but the next one starts at "
                        + segment.baseOffset() + "; move the later segments away to open it");
            }
            loaded.add(segment);
            boolean holdsUnflushed = last || bases.get(i + 1) > recoveryPoint;
            String problem = holdsUnflushed && !clean ? "unclean shutdown" : SegmentLoader.load(segment);
            if (problem == null && segment.firstReceiveTimeMs() != LogSegment.NO_TIME
                    && segment.firstReceiveTimeMs() < previousMaxReceiveTime) {
                problem = "its first ReceiveTime " + segment.firstReceiveTimeMs()
                        + " is below the previous segment's last " + previousMaxReceiveTime;
            }
            if (problem != null) {
                LOG.info("Recovering {} ({})", segment.logFile(), problem);
                SegmentRecovery.recover(segment, previousMaxReceiveTime, validator, settings);
                recovered = true;
                if (!last && segment.nextOffset() != bases.get(i + 1)) {
                    deleteAfter(dir, segment, bases.subList(i + 1, bases.size()), settings);
                    break;
                }
                if (!last) {
                    segment.closeForAppends();
                }
            }
            segment.followReceiveTime(previousMaxReceiveTime);
            if (segment.maxReceiveTimeMs() != LogSegment.NO_TIME) {
                previousMaxReceiveTime = segment.maxReceiveTimeMs();
            }
        }
        if (recovered) {
            LogSegment active = loaded.get(loaded.size() - 1);
            active.flush();
            RecoveryPointFile.write(dir, active.nextOffset());
        }
        return loaded.toArray(new LogSegment[0]);
    }

    private static void deleteAfter(Path dir, LogSegment truncated, List<Long> laterBases, SegmentSettings settings)
            throws IOException {
        for (long base : laterBases) {
            LogSegment later = LogSegment.open(dir, base, settings, false);
            later.delete();
        }
        LOG.error("{} lost batches before its end, so the {} segments after it were deleted: the log now ends at "
                + "offset {}", truncated.logFile(), laterBases.size(), truncated.nextOffset());
    }

    /** Base offsets of the segments in {@code dir}, ascending; index files whose log is gone are deleted. */
    private static List<Long> segmentBases(Path dir) throws IOException {
        TreeSet<Long> logs = new TreeSet<>();
        List<Path> indexes = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path file : files) {
                Matcher m = SEGMENT_FILE.matcher(file.getFileName().toString());
                if (m.matches()) {
                    if (m.group(2).equals(LogSegment.LOG_SUFFIX)) {
                        logs.add(Long.parseLong(m.group(1)));
                    } else {
                        indexes.add(file);
                    }
                }
            }
        }
        for (Path index : indexes) {
            String name = index.getFileName().toString();
            if (!logs.contains(Long.parseLong(name.substring(0, 20)))) {
                LOG.warn("Deleting {}: its segment's log file is gone", index);
                Files.delete(index);
            }
        }
        return new ArrayList<>(logs);
    }
}
