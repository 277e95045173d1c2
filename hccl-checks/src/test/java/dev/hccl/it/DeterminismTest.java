package dev.hccl.it;

import dev.hccl.algorithms.AlgorithmCatalog;
import dev.hccl.algorithms.ArenaAlgorithm;
import dev.hccl.api.Fp8Floats;
import dev.hccl.api.HalfFloats;
import dev.hccl.api.CommConfig;
import dev.hccl.api.CommConfigBuilder;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.transport.shm.ShmTransportProvider;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code HCCL_DETERMINISTIC=true}: floating-point reductions of random (inexact) values give bitwise the same result
 * on every rank, in every repetition, over TCP and over the in-JVM transport alike (whose messages arrive in quite
 * different orders), for every all-reduce algorithm forced in turn and for the automatic choice; over shared memory
 * too, which gives TCP's bits unless the node arena runs (forced, or chosen), which reduces in an order of its own.
 */
@Timeout(600)
class DeterminismTest
{
    private static final int RANKS = 3;
    private static final int REPEATS = 3;
    private static final int SEGMENT_BYTES = 16 * 1024;

    static Stream<Arguments> algorithmsTypesAndCounts()
    {
        final List<String> algos = new ArrayList<>(AlgorithmCatalog.standard().namesFor(Operation.ALL_REDUCE));
        algos.add(AlgorithmCatalog.AUTOMATIC);
        final List<Arguments> cases = new ArrayList<>();
        for (final String algo : algos)
        {
            for (final DataType type : List.of(DataType.FP32, DataType.BF16, DataType.FP16, DataType.FP8_E5M2))
            {
                for (final int count : new int[] {301, 50_021})
                {
                    cases.add(Arguments.of(algo, type, count));
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} {1} x {2}")
    @MethodSource("algorithmsTypesAndCounts")
    void allReduceGivesTheSameBitsOnEveryRankEveryTimeOverEveryTransport(
        final String algo, final DataType type, final int count) throws Exception
    {
        final byte[][] tcp = runAllReduce(openTcp(algo), type, count);
        final byte[][] inJvm = runAllReduce(Hccl.initAll(RANKS, config(algo, -1, 0).worldSize(RANKS).conclude()), type, count);
        final byte[][] shm = runAllReduce(open(algo, false), type, count);
        // Over shared memory the node arena may run where the others pass messages, in an order of its own.
        final boolean arenaOverShm = algo.equals(ArenaAlgorithm.NAME) || algo.equals(AlgorithmCatalog.AUTOMATIC);
        for (int r = 0; r < RANKS; r++)
        {
            assertArrayEquals(tcp[0], tcp[r], "rank " + r + " differs from rank 0 over TCP");
            assertArrayEquals(tcp[0], inJvm[r], "rank " + r + " in the JVM differs from TCP");
            assertArrayEquals(shm[0], shm[r], "rank " + r + " differs from rank 0 over shared memory");
            if (!arenaOverShm)
            {
                assertArrayEquals(tcp[0], shm[r], "rank " + r + " over shared memory differs from TCP");
            }
        }
        assertTrue(!Arrays.equals(tcp[0], new byte[tcp[0].length]), "the result must not be all zero");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("reductions")
    void reduceScatterAndReduceGiveTheSameBitsEveryTime(final Operation op) throws Exception
    {
        // Over shared memory: the node arena's reduce-scatter and reduce.
        final List<Communicator> comms = open(AlgorithmCatalog.AUTOMATIC, false);
        try
        {
            final int count = 30_011;
            final List<byte[]> results = Ranks.onEach(comms, 300, comm ->
            {
                final ByteBuffer send = randomInput(comm.rank(), DataType.FP32, count * RANKS);
                final ByteBuffer recv = ByteBuffer.allocateDirect(count * RANKS * 4).order(ByteOrder.nativeOrder());
                byte[] first = null;
                for (int i = 0; i < REPEATS; i++)
                {
                    if (op == Operation.REDUCE_SCATTER)
                    {
                        comm.reduceScatter(send, recv, count, DataType.FP32, ReduceOp.SUM);
                    }
                    else
                    {
                        comm.reduce(send, recv, count * RANKS, DataType.FP32, ReduceOp.SUM, 1);
                    }
                    final byte[] now = bytes(recv, (op == Operation.REDUCE_SCATTER ? count : count * RANKS) * 4);
                    if (first == null)
                    {
                        first = now;
                    }
                    else
                    {
                        assertArrayEquals(first, now, "rank " + comm.rank() + ": repetition " + i + " differs");
                    }
                }
                return first;
            });
            assertTrue(results.size() == RANKS);
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    static Stream<Operation> reductions()
    {
        return Stream.of(Operation.REDUCE_SCATTER, Operation.REDUCE);
    }

    private static byte[][] runAllReduce(final List<Communicator> comms, final DataType type, final int count)
        throws Exception
    {
        try
        {
            final List<byte[]> results = Ranks.onEach(comms, 300, comm ->
            {
                final ByteBuffer send = randomInput(comm.rank(), type, count);
                final ByteBuffer recv = ByteBuffer.allocateDirect(count * type.size()).order(ByteOrder.nativeOrder());
                byte[] first = null;
                for (int i = 0; i < REPEATS; i++)
                {
                    comm.allReduce(send, recv, count, type, ReduceOp.SUM);
                    final byte[] now = bytes(recv, count * type.size());
                    if (first == null)
                    {
                        first = now;
                    }
                    else
                    {
                        assertArrayEquals(first, now, "rank " + comm.rank() + ": repetition " + i + " differs");
                    }
                }
                return first;
            });
            return results.toArray(new byte[0][]);
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    private static List<Communicator> openTcp(final String algo) throws Exception
    {
        return open(algo, true);
    }

    /** Ranks as threads with a real rendezvous: over TCP alone, or over shared memory (and its node arena). */
    private static List<Communicator> open(final String algo, final boolean tcpOnly) throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        return Ranks.run(RANKS, 120, rank -> Hccl.init(config(algo, rank, port)
            .set(ShmTransportProvider.DISABLE, tcpOnly).conclude()));
    }

    private static CommConfigBuilder config(final String algo, final int rank, final int port)
    {
        final CommConfigBuilder b = CommConfig.builder().environment(Map.of())
            .algo(algo)
            .deterministic(true)
            .segmentBytes(SEGMENT_BYTES)
            .connectTimeout(Duration.ofSeconds(60))
            .execTimeout(Duration.ofSeconds(120));
        return rank < 0 ? b : b.rank(rank).worldSize(RANKS).masterAddr("127.0.0.1").masterPort(port);
    }

    /** Random values of mixed magnitudes and signs: their sums round, so the order of the additions shows. */
    private static ByteBuffer randomInput(final int rank, final DataType type, final int count)
    {
        final Random random = new Random(1_000_003L * (rank + 1));
        final ByteBuffer b = ByteBuffer.allocateDirect(count * type.size()).order(ByteOrder.nativeOrder());
        for (int i = 0; i < count; i++)
        {
            final float v = (float)(random.nextGaussian() * Math.pow(10, random.nextInt(7) - 3));
            switch (type)
            {
                case FP32 -> b.putFloat(i * 4, v);
                case BF16 -> b.putShort(i * 2, HalfFloats.floatToBf16(v));
                case FP16 -> b.putShort(i * 2, HalfFloats.floatToFp16(v));
                case FP8_E5M2 -> b.put(i, Fp8Floats.floatToE5m2(v));
                default -> throw new IllegalArgumentException(type.toString());
            }
        }
        return b;
    }

    private static byte[] bytes(final ByteBuffer b, final int length)
    {
        final byte[] out = new byte[length];
        b.get(0, out, 0, length);
        return out;
    }
}
