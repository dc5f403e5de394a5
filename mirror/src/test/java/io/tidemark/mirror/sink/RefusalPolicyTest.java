package io.tidemark.mirror.sink;

import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The scenarios of {@code refusals.txt}, run: each line's left side is fed to {@link RefusalPolicy} and the line
 * written again with the action it returns; the file must come out unchanged (etcd's testdata style: the file is
 * the golden output).
 */
class RefusalPolicyTest {
    @Test
    void everyScenarioGetsTheActionTheFileSays() throws IOException {
        String scenarios;
        try (InputStream in = RefusalPolicyTest.class.getResourceAsStream("refusals.txt")) {
            scenarios = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        String run = scenarios.lines().map(RefusalPolicyTest::run).collect(Collectors.joining("\n", "", "\n"));
        assertEquals(scenarios, run);
    }

    private static String run(String line) {
        if (line.isBlank() || line.startsWith("#")) {
            return line;
        }
        String situation = line.substring(0, line.indexOf(" ->"));
        String[] words = situation.split(" ");
        RefusalPolicy.Action action = switch (words[0]) {
            case "copy" -> RefusalPolicy.afterCopyRefused(Integer.parseInt(words[1]), ErrorCode.valueOf(words[2]),
                    words[3].equals("dead-letter-topic"));
            case "dead-letter" -> RefusalPolicy.afterDeadLetterRefused(ErrorCode.valueOf(words[1]));
            case "ask" -> RefusalPolicy.afterAskRefused(ErrorCode.valueOf(words[1]));
            default -> throw new IllegalArgumentException("unknown scenario: " + line);
        };
        return situation + " -> " + action;
    }
}
