package dev.hccl.it;

import dev.hccl.tools.trace.HcclTrace;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The flight recorder and its analyzer, in real processes: a rank that does not issue the second all-reduce makes the
 * others time out; every rank writes its dump to HCCL_DUMP_DIR on failure, and hccl-trace names the rank that never
 * issued the operation.
 */
@Timeout(120)
class FlightRecorderTest
{
    @Test
    void everyRankDumpsOnFailureAndTheAnalyzerNamesTheRankThatNeverIssuedTheOperation(@TempDir final Path dir)
        throws Exception
    {
        try (ProcessJob job = ProcessJob.start(3, LateRankWorker.class, "256m",
            Map.of("HCCL_EXEC_TIMEOUT", "3", "HCCL_DUMP_DIR", dir.toString()), "2", "8000"))
        {
            for (int r = 0; r < 3; r++)
            {
                assertEquals(3, job.awaitExit(r, 60), job.outputs());
            }
        }
        final List<String> dumps;
        try (Stream<Path> files = Files.list(dir))
        {
            dumps = files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".json")).sorted().toList();
        }
        assertEquals(3, dumps.size(), dumps.toString());
        final StringWriter out = new StringWriter();
        assertEquals(0, HcclTrace.run(new PrintWriter(out, true), new PrintWriter(new StringWriter(), true),
            dir.toString()));
        final String report = out.toString();
        assertTrue(report.contains("dumps of all 3 ranks"), report);
        assertTrue(report.contains("Rank 2 never issued collective #1 (allReduce(count=1, FP32, SUM)), which ranks " +
            "[0, 1] issued; its last was #0"), report);
        assertTrue(report.contains("Still running when dumped: rank 0 in #1") ||
            report.contains("Still running when dumped: rank 1 in #1"), report);
        assertTrue(report.contains("failed: E_TIMEOUT"), report);
    }

    @Test
    void aTouchedTriggerFileMakesARunningJobDumpOnDemand(@TempDir final Path dir) throws Exception
    {
        try (ProcessJob job = ProcessJob.start(2, AllReduceLoopWorker.class, "256m",
            Map.of("HCCL_DUMP_DIR", dir.toString())))
        {
            for (int r = 0; r < 2; r++)
            {
                assertTrue(job.awaitLine(r, "READY", 60), job.outputs());
            }
            Files.writeString(dir.resolve("hccl-dump-now"), "now");
            final long deadline = System.nanoTime() + 30_000_000_000L;
            long count = 0;
            while (count < 2 && System.nanoTime() < deadline)
            {
                Thread.sleep(200);
                try (Stream<Path> files = Files.list(dir))
                {
                    count = files.filter(f -> f.getFileName().toString().startsWith("hccl-trace-")).count();
                }
            }
            assertEquals(2, count, "both ranks dump on demand while they run");
        }
        final StringWriter out = new StringWriter();
        assertEquals(0, HcclTrace.run(new PrintWriter(out, true), new PrintWriter(new StringWriter(), true),
            dir.toString()));
        assertTrue(out.toString().contains("dumps of all 2 ranks"), out.toString());
    }
}
