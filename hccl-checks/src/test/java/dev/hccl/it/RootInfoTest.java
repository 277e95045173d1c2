package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * HCCL's root-info style of creation: rank 0 makes an opaque string, every rank joins with it.
 */
@Timeout(60)
class RootInfoTest
{
    @Test
    void ranksJoinWithTheStringRankZeroMade() throws Exception
    {
        final String info = Hccl.getRootInfo();
        assertTrue(info.startsWith("hccl1:"), info);
        final List<long[]> results = Ranks.run(3, 30, rank ->
        {
            try (Communicator comm = Hccl.initRootInfo(info, rank, 3))
            {
                final long[] data = {rank, 1L << rank};
                comm.allReduce(data, ReduceOp.SUM);
                return data;
            }
        });
        for (final long[] r : results)
        {
            assertArrayEquals(new long[]{3, 7}, r);
        }
    }

    @Test
    void aMalformedRootInfoIsRejectedClearly()
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> Hccl.initRootInfo("not-a-root-info", 1, 2));
        assertTrue(ex.getMessage().contains("not an hccl root info"), ex.getMessage());
    }
}
