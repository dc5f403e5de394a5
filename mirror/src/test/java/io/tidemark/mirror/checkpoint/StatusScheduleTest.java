package io.tidemark.mirror.checkpoint;

import io.tidemark.mirror.sink.CopierStatus;
import io.tidemark.mirror.sink.CopyState;
import io.tidemark.mirror.sink.StopReason;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The scenario of {@code status-schedule.txt}, run line by line against one {@link StatusSchedule}: the file is the
 * golden output.
 */
class StatusScheduleTest {
    private final StatusSchedule schedule = new StatusSchedule(5_000);
    private Optional<StatusSchedule.Written> last = Optional.empty();

    @Test
    void aPartitionsStatusIsWrittenWhenTheFileSays() throws IOException {
        String scenario;
        try (InputStream in = StatusScheduleTest.class.getResourceAsStream("status-schedule.txt")) {
            scenario = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        List<String> run = new ArrayList<>();
        scenario.lines().forEach(line -> run.add(line.isBlank() || line.startsWith("#") ? line : run(line)));
        assertEquals(scenario, String.join("\n", run) + "\n");
    }

    private String run(String line) {
        String asked = line.substring(0, line.indexOf(" ->"));
        String[] words = asked.split(" ");
        long atMs = Long.parseLong(words[1]);
        Optional<StopReason> reason = Optional.empty();
        if (words.length > 7) {
            String[] codeAt = words[8].split("@");
            reason = Optional.of(StopReason.refused(Long.parseLong(codeAt[1]), ErrorCode.valueOf(codeAt[0]), "m"));
        }
        CopierStatus status = new CopierStatus(CopyState.valueOf(words[2].toUpperCase(Locale.ROOT)),
                Long.parseLong(words[4]), 200, Long.parseLong(words[6]), 0, reason);
        boolean due = schedule.due(last, status, atMs);
        if (due) {
            last = Optional.of(new StatusSchedule.Written(status, atMs));
        }
        return asked + " -> " + (due ? "write" : "wait");
    }
}
