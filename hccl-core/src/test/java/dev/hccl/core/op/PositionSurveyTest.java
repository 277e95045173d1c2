package dev.hccl.core.op;

import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.core.mailbox.Position;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How a timeout names the rank at fault from every rank's position.
 */
class PositionSurveyTest
{
    private static final OpDescriptor ALL_REDUCE =
        new OpDescriptor(Operation.ALL_REDUCE, DataType.FP32, ReduceOp.SUM, OpDescriptor.NO_ROOT, 1024);
    private static final OpDescriptor RECV = new OpDescriptor(Operation.RECV, DataType.FP32, null, 3, 8);

    private static Position waiting(final long seq, final int forRank)
    {
        return new Position(seq, ALL_REDUCE, forRank, 3000, seq, seq - 1);
    }

    private static Position idleAfter(final long seq)
    {
        return new Position(seq, null, -1, -1, seq, seq);
    }

    @Test
    void aRankThatDoesNotAnswerIsNamedFirst()
    {
        final PositionSurvey.Finding f = PositionSurvey.judge(0,
            new Position[]{waiting(5, 1), waiting(5, 2), null, idleAfter(4)});
        assertEquals(2, f.culprit());
        assertTrue(f.account().startsWith("rank 2 did not answer"), f.account());
    }

    @Test
    void aRankThatHasNotIssuedTheOperationIsBehindNotTheNeighbourWaitedFor()
    {
        // Rank 1 waits for rank 0 (a ring), which waits for rank 2, which never issued #5.
        final PositionSurvey.Finding f = PositionSurvey.judge(1,
            new Position[]{waiting(5, 2), waiting(5, 0), idleAfter(4)});
        assertEquals(2, f.culprit());
        assertTrue(f.account().startsWith("rank 2 is behind: idle after collective #4"), f.account());
    }

    @Test
    void theMostBehindIsNamedWhenSeveralAre()
    {
        final PositionSurvey.Finding f = PositionSurvey.judge(0,
            new Position[]{waiting(7, 1), waiting(6, 2), idleAfter(3), waiting(7, 0)});
        assertEquals(2, f.culprit(), f.account());
    }

    @Test
    void aRankThatFinishedTheOperationIsNotBehind()
    {
        // Rank 2 completed #5 (it only sends in it, a broadcast root): the chain leads to rank 1, which runs.
        final PositionSurvey.Finding f = PositionSurvey.judge(0,
            new Position[]{waiting(5, 1), new Position(5, ALL_REDUCE, -1, 10, 5, 4), idleAfter(5)});
        assertEquals(1, f.culprit(), f.account());
        assertTrue(f.account().startsWith("rank 1 holds the others up: running"), f.account());
    }

    @Test
    void ranksWaitingForEachOtherInACycleAreAMismatchNotOneRanksFault()
    {
        final Position[] p = {new Position(2, RECV, 1, 3000, -1, -1),
            new Position(2, RECV, 0, 3000, -1, -1)};
        final PositionSurvey.Finding f = PositionSurvey.judge(0, p);
        assertEquals(-1, f.culprit());
        assertTrue(f.account().startsWith("the ranks wait for each other in a cycle"), f.account());
    }
}
