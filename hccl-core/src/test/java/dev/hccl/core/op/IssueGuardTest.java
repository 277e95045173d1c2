package dev.hccl.core.op;

import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.OpDescriptor;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

class IssueGuardTest
{
    private static final OpDescriptor ALL_REDUCE =
        new OpDescriptor(Operation.ALL_REDUCE, DataType.FP32, ReduceOp.SUM, OpDescriptor.NO_ROOT, 8);

    private static IssueGuard.Holder enterElsewhere(final IssueGuard guard, final int lane) throws Exception
    {
        return CompletableFuture.supplyAsync(() -> guard.enter(lane, ALL_REDUCE)).get();
    }

    @Test
    void anotherThreadInAHeldLaneIsTurnedAwayAndToldWhoHoldsIt() throws Exception
    {
        final IssueGuard guard = new IssueGuard(4);
        assertNull(guard.enter(IssueGuard.COLLECTIVES, ALL_REDUCE));
        final IssueGuard.Holder holder = enterElsewhere(guard, IssueGuard.COLLECTIVES);
        assertSame(Thread.currentThread(), holder.thread);
        assertSame(ALL_REDUCE, holder.desc);
        guard.exit(IssueGuard.COLLECTIVES);
        assertNull(enterElsewhere(guard, IssueGuard.COLLECTIVES), "free once given back");
    }

    @Test
    void theHolderMayEnterAgainAndHoldsTheLaneUntilItsLastExit() throws Exception
    {
        final IssueGuard guard = new IssueGuard(2);
        assertNull(guard.enter(IssueGuard.COLLECTIVES, ALL_REDUCE));
        assertNull(guard.enter(IssueGuard.COLLECTIVES, ALL_REDUCE));
        guard.exit(IssueGuard.COLLECTIVES);
        assertSame(Thread.currentThread(), enterElsewhere(guard, IssueGuard.COLLECTIVES).thread, "still held");
        guard.exit(IssueGuard.COLLECTIVES);
        assertNull(enterElsewhere(guard, IssueGuard.COLLECTIVES));
    }

    @Test
    void sendsAndReceivesOfEachPeerHaveLanesOfTheirOwn() throws Exception
    {
        final IssueGuard guard = new IssueGuard(3);
        assertNull(guard.enter(IssueGuard.pointToPoint(1, true), ALL_REDUCE));
        assertNull(enterElsewhere(guard, IssueGuard.pointToPoint(1, false)), "receives from the same peer");
        assertNull(enterElsewhere(guard, IssueGuard.pointToPoint(2, true)), "sends to another peer");
        assertNull(enterElsewhere(guard, IssueGuard.COLLECTIVES), "collectives");
        assertEquals(Thread.currentThread(), enterElsewhere(guard, IssueGuard.pointToPoint(1, true)).thread);
        assertNotEquals(IssueGuard.pointToPoint(0, false), IssueGuard.pointToPoint(1, true));
    }
}
