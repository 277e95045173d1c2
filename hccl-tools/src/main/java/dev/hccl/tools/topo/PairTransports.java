package dev.hccl.tools.topo;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.spi.TransportKind;

import java.nio.ByteBuffer;

/**
 * Which pairs of ranks talk through shared memory: each rank knows the transport of its own pairs
 * ({@link Communicator#transportKindTo}), so each contributes its row (one allGather).
 */
final class PairTransports
{
    private PairTransports()
    {
    }

    /**
     * Gathers every rank's row; collective.
     *
     * @param comm the communicator.
     * @return {@code [a][b]}: whether rank a reaches rank b through shared memory.
     */
    static boolean[][] sharedMemory(final Communicator comm)
    {
        final int n = comm.worldSize();
        final ByteBuffer mine = ByteBuffer.allocateDirect(n);
        for (int peer = 0; peer < n; peer++)
        {
            mine.put(peer, (byte)(peer != comm.rank() &&
                comm.transportKindTo(peer).medium() == TransportKind.Medium.SHARED_MEMORY ? 1 : 0));
        }
        final ByteBuffer all = ByteBuffer.allocateDirect(n * n);
        comm.allGather(mine, all, n, DataType.INT8);
        final boolean[][] matrix = new boolean[n][n];
        for (int a = 0; a < n; a++)
        {
            for (int b = 0; b < n; b++)
            {
                matrix[a][b] = all.get(a * n + b) != 0;
            }
        }
        return matrix;
    }
}
