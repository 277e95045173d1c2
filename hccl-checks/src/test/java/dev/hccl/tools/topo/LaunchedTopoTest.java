package dev.hccl.tools.topo;

import dev.hccl.tools.ScriptCheckout;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hccl.tools.launch.HcclRun;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tool in real processes over TCP, started by the launcher: in-process through {@link HcclRun#run}, and as users
 * type it, {@code bin/hcclrun -np 2 hccl-topo}, with the command found by name on the PATH that {@code bin/hcclrun}
 * extends.
 */
@Timeout(120)
class LaunchedTopoTest
{
    private static final String JAVA = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    private static final String CLASS_PATH = System.getProperty("java.class.path");

    @TempDir
    Path tmp;

    @Test
    void threeProcessesProbedPrintFromRankZeroAndWriteTheJson() throws IOException
    {
        final Path json = tmp.resolve("topo.json");
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int status = HcclRun.run(new String[]{"-np", "3", "--", JAVA, "-cp", CLASS_PATH,
            "dev.hccl.tools.topo.HcclTopo", "--probe", "--probe-bytes", "64K", "--latency-iters", "5",
            "--bandwidth-iters", "3", "--json", json.toString()},
            new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));

        final String stdout = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, () -> stdout + "\nstderr:\n" + err.toString(StandardCharsets.UTF_8));
        final List<String> text = fromRankZero(stdout);
        assertEquals("hccl-topo: 3 ranks on 1 node", text.get(0));
        assertOneNodeMatrix(text, 3);
        assertTrue(text.contains("Bandwidth (GB/s): median of 3 transfers of 65536 bytes, from row to column"), stdout);

        final JsonNode root = new ObjectMapper().readTree(json.toFile());
        final Set<Long> pids = new HashSet<>();
        root.get("ranks").forEach(r -> pids.add(r.get("pid").asLong()));
        assertEquals(3, pids.size(), "three processes: " + root.get("ranks"));
        for (int from = 0; from < 3; from++)
        {
            for (int to = 0; to < 3; to++)
            {
                final JsonNode bw = root.get("probe").get("bandwidthGBps").get(from).get(to);
                assertTrue(from == to ? bw.isNull() : bw.asDouble() > 0, from + "->" + to + ": " + bw);
            }
        }
    }

    @Test
    void theScriptIsFoundByNameThroughHcclrun() throws Exception
    {
        // The real scripts, as a user runs them: the launcher must find hccl-topo through the PATH it exports.
        final ScriptCheckout.Run run = ScriptCheckout.hcclrun(tmp, "hccl-topo", "-np", "2", "hccl-topo");
        assertEquals(0, run.status(), () -> run.stdout() + "\nstderr:\n" + run.stderr());
        final List<String> lines = fromRankZero(run.stdout());
        assertEquals("hccl-topo: 2 ranks on 1 node", lines.get(0));
        assertOneNodeMatrix(lines, 2);
    }

    /**
     * Every line comes from rank 0; returns them without the launcher's prefix.
     */
    private static List<String> fromRankZero(final String stdout)
    {
        final List<String> lines = stdout.lines().collect(Collectors.toList());
        assertTrue(lines.stream().allMatch(l -> l.startsWith("[0] ")), "only rank 0 prints:\n" + stdout);
        return lines.stream().map(l -> l.substring("[0] ".length())).collect(Collectors.toList());
    }

    private static void assertOneNodeMatrix(final List<String> lines, final int ranks)
    {
        final String labels = String.join(" ", IntStream.range(0, ranks).mapToObj(r -> "R" + r)
            .collect(Collectors.toList()));
        final int head = lines.stream().map(l -> l.trim().replaceAll(" +", " ")).collect(Collectors.toList())
            .indexOf(labels);
        assertTrue(head > 0, String.join("\n", lines));
        for (int from = 0; from < ranks; from++)
        {
            final String[] cells = lines.get(head + 1 + from).trim().split(" +");
            assertEquals("R" + from, cells[0]);
            for (int to = 0; to < ranks; to++)
            {
                assertEquals(from == to ? "X" : "SHM", cells[1 + to], lines.get(head + 1 + from));
            }
        }
    }
}
