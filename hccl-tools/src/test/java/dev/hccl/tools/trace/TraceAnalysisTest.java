package dev.hccl.tools.trace;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * hccl-trace's reasoning over made-up dumps.
 */
class TraceAnalysisTest
{
    private static TraceAnalysis.Op collective(
        final long seq, final String op, final int root, final String fingerprint, final String state,
        final long startedMicros)
    {
        return new TraceAnalysis.Op("collective", -1, seq, op, "FP32", null, root, 64, "ring", fingerprint, state,
            startedMicros, null);
    }

    @Test
    void ranksThatIssuedDifferentOperationsAtOneSequenceNumberAreNamed()
    {
        final TraceAnalysis.Dump r0 = new TraceAnalysis.Dump("c1", 0, 2, null, "h", "failure",
            new TraceAnalysis.Failure("E_MISMATCH ...", false),
            List.of(collective(0, "allReduce", -1, "a", "completed", 10), collective(1, "broadcast", 0, "b0",
                "completed", 20)));
        final TraceAnalysis.Dump r1 = new TraceAnalysis.Dump("c1", 1, 2, null, "h", "failure", null,
            List.of(collective(0, "allReduce", -1, "a", "completed", 12), collective(1, "broadcast", 1, "b1",
                "completed", 25)));
        final String report = TraceAnalysis.explain(List.of(r1, r0));
        assertTrue(report.contains("At collective #1 the ranks issued different operations: rank 0 " +
            "broadcast(count=64, FP32, root=0), rank 1 broadcast(count=64, FP32, root=1)."), report);
        assertTrue(report.contains("Rank 0 failed: E_MISMATCH"), report);
    }

    @Test
    void theRootCauseIsTheFailureNotRelayedFromAPeerWhateverItsText()
    {
        // Rank 0's own failure quotes a peer's words; rank 1 only passed rank 0's failure on. The fields decide.
        final TraceAnalysis.Dump r0 = new TraceAnalysis.Dump("c1", 0, 2, null, "h", "failure",
            new TraceAnalysis.Failure("E_TCP_TRANSFER: rank 1 lost its connection to this rank (write failed: " +
                "Broken pipe)", false), List.of());
        final TraceAnalysis.Dump r1 = new TraceAnalysis.Dump("c1", 1, 2, null, "h", "failure",
            new TraceAnalysis.Failure("E_REMOTE: rank 0 gave up", true), List.of());
        for (final List<TraceAnalysis.Dump> order : List.of(List.of(r0, r1), List.of(r1, r0)))
        {
            final String report = TraceAnalysis.explain(order);
            assertTrue(report.contains("Rank 0 failed: E_TCP_TRANSFER"), report);
            assertTrue(!report.contains("Rank 1 failed"), report);
        }
    }

    @Test
    void theRankThatStartsLastMostOftenIsTheSlowest()
    {
        final TraceAnalysis.Dump r0 = new TraceAnalysis.Dump("c1", 0, 3, null, "h", "demand", null,
            List.of(collective(0, "allReduce", -1, "a", "completed", 100), collective(1, "allReduce", -1, "a",
                "completed", 200)));
        final TraceAnalysis.Dump r1 = new TraceAnalysis.Dump("c1", 1, 3, null, "h", "demand", null,
            List.of(collective(0, "allReduce", -1, "a", "completed", 3100), collective(1, "allReduce", -1, "a",
                "completed", 4200)));
        final TraceAnalysis.Dump r2 = new TraceAnalysis.Dump("c1", 2, 3, null, "h", "demand", null,
            List.of(collective(0, "allReduce", -1, "a", "completed", 150)));
        final String report = TraceAnalysis.explain(List.of(r0, r1, r2));
        assertTrue(report.contains("Slowest: rank 1 started last in 1 of the 1 collectives every rank completed, " +
            "on average 3.00 ms after the first"), report);
        assertTrue(report.contains("Rank 2 never issued collective #1"), report);
    }

    @Test
    void aSplitCommunicatorsRanksAreNamedWithTheirJobRanks()
    {
        // The odd ranks of a job of 6, split: its rank 1 is the job's rank 3.
        final int[] odd = {1, 3, 5};
        final TraceAnalysis.Dump r0 = new TraceAnalysis.Dump("c2", 0, 3, odd, "h", "demand", null,
            List.of(collective(0, "allReduce", -1, "a", "completed", 100), collective(1, "allReduce", -1, "a",
                "started", 200)));
        final TraceAnalysis.Dump r1 = new TraceAnalysis.Dump("c2", 1, 3, odd, "h", "demand", null,
            List.of(collective(0, "allReduce", -1, "a", "completed", 150)));
        final String report = TraceAnalysis.explain(List.of(r0, r1));
        assertTrue(report.contains("Rank 1 never issued collective #1"), report);
        assertTrue(report.endsWith(" Its ranks are the job's ranks 0=1, 1=3, 2=5."), report);
        final TraceAnalysis.Dump job = new TraceAnalysis.Dump("c1", 0, 2, new int[] {0, 1}, "h", "demand", null,
            List.of());
        assertTrue(!TraceAnalysis.explain(List.of(job)).contains("job's ranks"), "the job's own communicator");
    }

    @Test
    void missingDumpsAreNamed()
    {
        final TraceAnalysis.Dump r0 = new TraceAnalysis.Dump("c1", 0, 3, null, "h", "demand", null, List.of());
        assertTrue(TraceAnalysis.explain(List.of(r0)).contains("ranks [0] of 3 (none from [1, 2]"));
    }
}
