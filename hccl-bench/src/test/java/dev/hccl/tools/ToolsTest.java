package dev.hccl.tools;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A rank's command that names a tool runs from the tools jar when the launcher itself does ({@code java -jar
 * hccl-tools.jar run -np 4 bench ...}); other commands, and every command of a launcher started otherwise, are left as
 * they are. The jar end to end, outside the repository, is tools/consumer-check.sh's (it needs the package phase).
 */
class ToolsTest
{
    @AfterEach
    void clear()
    {
        System.clearProperty(Tools.JAR_PROPERTY);
    }

    @Test
    void aToolsNameRunsFromTheJarTheLauncherRunsFrom()
    {
        System.setProperty(Tools.JAR_PROPERTY, "/opt/hccl-tools.jar");
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        assertEquals(List.of(java, "-jar", "/opt/hccl-tools.jar", "bench", "all_reduce", "-b", "8"),
            Tools.expand(List.of("bench", "all_reduce", "-b", "8")));
        assertEquals(List.of(java, "-jar", "/opt/hccl-tools.jar", "step-bench", "--model", "tiny"),
            Tools.expand(List.of("hccl-step-bench", "--model", "tiny")), "the bin/ script's name too");
        assertEquals(List.of(java, "-jar", "/opt/hccl-tools.jar", "check"), Tools.expand(List.of("SelfCheck")));
        assertEquals(List.of("java", "-cp", "app.jar", "Main"), Tools.expand(List.of("java", "-cp", "app.jar", "Main")));
        assertEquals(List.of("run", "x"), Tools.expand(List.of("run", "x")), "the launcher is not a rank's command");
    }

    @Test
    void withoutTheJarCommandsAreLeftAlone()
    {
        assertEquals(List.of("hccl-bench", "all_reduce"), Tools.expand(List.of("hccl-bench", "all_reduce")));
    }
}
