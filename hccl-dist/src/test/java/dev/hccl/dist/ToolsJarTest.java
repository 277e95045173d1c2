package dev.hccl.dist;

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
class ToolsJarTest
{
    @AfterEach
    void clear()
    {
        System.clearProperty(ToolsJar.JAR_PROPERTY);
    }

    @Test
    void aToolsNameRunsFromTheJarTheLauncherRunsFrom()
    {
        System.setProperty(ToolsJar.JAR_PROPERTY, "/opt/hccl-tools.jar");
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        assertEquals(List.of(java, "-jar", "/opt/hccl-tools.jar", "bench", "all_reduce", "-b", "8"),
            ToolsJar.expand(List.of("bench", "all_reduce", "-b", "8")));
        assertEquals(List.of(java, "-jar", "/opt/hccl-tools.jar", "step-bench", "--model", "tiny"),
            ToolsJar.expand(List.of("hccl-step-bench", "--model", "tiny")), "the bin/ script's name too");
        assertEquals(List.of(java, "-jar", "/opt/hccl-tools.jar", "check"), ToolsJar.expand(List.of("SelfCheck")));
        assertEquals(List.of("java", "-cp", "app.jar", "Main"), ToolsJar.expand(List.of("java", "-cp", "app.jar", "Main")));
        assertEquals(List.of("run", "x"), ToolsJar.expand(List.of("run", "x")), "the launcher is not a rank's command");
        assertEquals(List.of(java, "-jar", "/opt/hccl-tools.jar", "status", "host:1"),
            ToolsJar.expand(List.of("hccl-status", "host:1")), "hccl-tools' own tools are found too");
    }

    @Test
    void withoutTheJarCommandsAreLeftAlone()
    {
        assertEquals(List.of("hccl-bench", "all_reduce"), ToolsJar.expand(List.of("hccl-bench", "all_reduce")));
    }
}
