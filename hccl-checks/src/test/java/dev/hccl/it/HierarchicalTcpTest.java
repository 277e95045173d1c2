package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.transport.netty.TcpTransportProvider;
import dev.hccl.transport.shm.ShmTransportProvider;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The hierarchical algorithms over real transports, ranks as threads on two "nodes" by {@code HCCL_NODE_ID}: TCP
 * between the nodes and, within them, shared memory (the transports of one rank then driven as one) or TCP too. The
 * pipelined all-reduce, whose rail thread's messages are driven by the caller's thread, with the transports driven by
 * their callers and with an I/O thread; all-gather, reduce-scatter and broadcast through the two levels; and HCCL's
 * level form, which composes the levels with the algorithm it names between nodes.
 */
@Timeout(300)
class HierarchicalTcpTest
{
    private static final int RANKS = 4;
    /** Above the size from which the all-reduce pipelines its levels, and not a multiple of the pieces. */
    private static final int COUNT = (8 << 20) / Float.BYTES + 13;

    @ParameterizedTest(name = "I/O threads {0}, HCCL_ALGO={1}, within nodes {2}")
    @CsvSource({"0, hierarchical, shm", "1, hierarchical, shm", "0, level0:NA;level1:H-D_R, shm",
        "0, hierarchical, tcp", "1, hierarchical, tcp"})
    void everyCollectiveOfTheHierarchyIsExactOverTcp(final int ioThreads, final String algo, final String local)
        throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final List<String> outcomes = Ranks.run(RANKS, 240, rank ->
        {
            try (Communicator comm = Hccl.init(CommConfig.builder().environment(Map.of())
                .rank(rank).worldSize(RANKS).masterAddr("127.0.0.1").masterPort(port)
                .nodeId("node" + rank / 2).algo(algo).set(TcpTransportProvider.IO_THREADS, ioThreads)
                .set(ShmTransportProvider.DISABLE, "tcp".equals(local))
                .connectTimeout(Duration.ofSeconds(60)).execTimeout(Duration.ofSeconds(120)).conclude()))
            {
                final Set<String> wanted = "shm".equals(local) ? Set.of("shm", "tcp") : Set.of("tcp");
                if (!Set.of(comm.transports().split("\\+")).equals(wanted))
                {
                    return "used " + comm.transports() + ", not " + wanted;
                }
                final String chosen = comm.algorithmFor(Operation.ALL_REDUCE, COUNT * 4L).algorithm();
                if (!chosen.equals(algo.equals("hierarchical") ? "hierarchical" : "hierarchical with level1 H-D_R"))
                {
                    return "ran " + chosen;
                }
                final ByteBuffer buf = floats(COUNT);
                for (int repeat = 0; repeat < 3; repeat++)
                {
                    for (int i = 0; i < COUNT; i++)
                    {
                        buf.putFloat(i * Float.BYTES, rank * 1000 + i % 1000 + repeat);
                    }
                    comm.allReduce(buf, buf, COUNT, DataType.FP32, ReduceOp.SUM);
                    for (int i = 0; i < COUNT; i++)
                    {
                        // Sum over ranks of rank * 1000 + i % 1000 + repeat: small integers, exact in FP32.
                        final float expected = 6000 + RANKS * (i % 1000 + repeat);
                        if (buf.getFloat(i * Float.BYTES) != expected)
                        {
                            return "all-reduce " + repeat + ": element " + i + " = " +
                                buf.getFloat(i * Float.BYTES) + ", expected " + expected;
                        }
                    }
                }
                final int block = 100_003;
                final ByteBuffer mine = floats(block);
                for (int i = 0; i < block; i++)
                {
                    mine.putFloat(i * Float.BYTES, rank * block + i);
                }
                final ByteBuffer all = floats(block * RANKS);
                comm.allGather(mine, all, block, DataType.FP32);
                for (int i = 0; i < block * RANKS; i++)
                {
                    if (all.getFloat(i * Float.BYTES) != i)
                    {
                        return "all-gather: element " + i + " = " + all.getFloat(i * Float.BYTES);
                    }
                }
                final ByteBuffer reduced = floats(block);
                comm.reduceScatter(all, reduced, block, DataType.FP32, ReduceOp.SUM);
                for (int i = 0; i < block; i++)
                {
                    if (reduced.getFloat(i * Float.BYTES) != RANKS * (float)(rank * block + i))
                    {
                        return "reduce-scatter: element " + i + " = " + reduced.getFloat(i * Float.BYTES);
                    }
                }
                final ByteBuffer data = floats(block);
                for (int i = 0; i < block; i++)
                {
                    data.putFloat(i * Float.BYTES, rank == 3 ? i : -1);
                }
                comm.broadcast(data, block, DataType.FP32, 3);
                for (int i = 0; i < block; i++)
                {
                    if (data.getFloat(i * Float.BYTES) != i)
                    {
                        return "broadcast: element " + i + " = " + data.getFloat(i * Float.BYTES);
                    }
                }
                return "OK";
            }
        });
        assertEquals(List.of("OK", "OK", "OK", "OK"), outcomes);
    }

    private static ByteBuffer floats(final int count)
    {
        return ByteBuffer.allocateDirect(count * Float.BYTES).order(ByteOrder.nativeOrder());
    }
}
