package dev.hccl.core.op;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PostedPointToPointTest
{
    /** An operation that failed before posting: done, and its join throws. */
    private static PointToPointOp failed(final String why)
    {
        final PointToPointOp op = new PointToPointOp();
        op.fail(new HcclException(ErrorCode.E_REMOTE, why));
        return op;
    }

    @Test
    void completedOperationsAreDroppedSoTheQueueStaysSmall()
    {
        final PostedPointToPoint posted = new PostedPointToPoint();
        for (int i = 0; i < 10_000; i++)
        {
            posted.add(failed("op " + i));
        }
        assertEquals(1, posted.size(), "each add drops the completed head");
    }

    @Test
    void completeAllWaitsForEveryOperationAndReportsEachFailure()
    {
        final PostedPointToPoint posted = new PostedPointToPoint();
        final PointToPointOp pending = new PointToPointOp(); // never posted: only completeAll may drop it
        posted.add(pending);
        for (int i = 0; i < 200; i++)
        {
            posted.add(failed("op " + i));
        }
        // The head never completes, so only the sweeps keep the queue small.
        final int remembered = posted.size();
        assertTrue(remembered <= 64, "swept when it reached 64: " + remembered);
        pending.fail(new HcclException(ErrorCode.E_TIMEOUT, "late"));
        final List<String> failures = new ArrayList<>();
        posted.completeAll((op, ex) -> failures.add(ex.detail()));
        assertEquals(0, posted.size());
        assertEquals(remembered, failures.size(), "every remembered operation was joined: " + failures);
        assertEquals("late", failures.get(0));
    }
}
