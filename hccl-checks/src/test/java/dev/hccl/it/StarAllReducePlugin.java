package dev.hccl.it;

import dev.hccl.algorithms.AlgorithmCatalog;
import dev.hccl.algorithms.AlgorithmPlugin;
import dev.hccl.algorithms.AutoLimits;
import dev.hccl.api.DataType;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Tags;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An algorithm from outside the library, registered through {@code META-INF/services}: a star all-reduce (every rank
 * to rank 0, reduced there in rank order, sent back), which counts its runs so that a test can tell it ran.
 */
public final class StarAllReducePlugin implements AlgorithmPlugin
{
    /** The name HCCL_ALGO forces it by. */
    static final String NAME = "test-star";
    /** Runs on any rank since the JVM started. */
    static final AtomicInteger RUNS = new AtomicInteger();

    @Override
    public void register(final AlgorithmCatalog catalog)
    {
        catalog.register(NAME, new Star(), AutoLimits.NONE);
    }

    private static final class Star implements AllReduceAlgorithm
    {
        @Override
        public String name()
        {
            return NAME;
        }

        @Override
        public void allReduce(
            final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int count, final DataType type,
            final Reducer reducer)
        {
            RUNS.incrementAndGet();
            final int bytes = count * type.size();
            if (send != recv)
            {
                recv.put(0, send, 0, bytes);
            }
            if (group.rank() == 0)
            {
                for (int r = 1; r < group.size(); r++)
                {
                    group.await(group.recvReduce(r, Tags.of(1, 0, 0), recv, 0, bytes, reducer));
                }
                for (int r = 1; r < group.size(); r++)
                {
                    group.await(group.send(r, Tags.of(2, 0, 0), recv, 0, bytes));
                }
            }
            else
            {
                group.await(group.send(0, Tags.of(1, 0, 0), recv, 0, bytes));
                group.await(group.recv(0, Tags.of(2, 0, 0), recv, 0, bytes));
            }
        }
    }
}
