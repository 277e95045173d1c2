package dev.hccl.it;

import dev.hccl.algorithms.AlgorithmCatalog;
import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Fp8Floats;
import dev.hccl.api.Hccl;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * FP8's AVG divides each rank's input by the world size before the sum, as NCCL does: four ranks holding 256 (E4M3)
 * or 32768 (E5M2) average to that value, where a sum of the inputs would saturate at 448 or 57344 and its quarter be
 * 112 or 14336. Every partial sum of the quarters is exact, so every algorithm must give the value itself, in every
 * reducing operation, in place and out of place.
 */
@Timeout(120)
class Fp8AverageTest
{
    private static final int RANKS = 4;
    private static final int COUNT = 37;

    static Stream<Arguments> typesAndAlgorithms()
    {
        final List<Arguments> cases = new ArrayList<>();
        final List<String> algorithms = new ArrayList<>(AlgorithmCatalog.standard().namesFor(Operation.ALL_REDUCE));
        algorithms.add(AlgorithmCatalog.AUTOMATIC);
        for (final DataType type : new DataType[] { DataType.FP8_E4M3, DataType.FP8_E5M2 })
        {
            for (final String algorithm : algorithms)
            {
                cases.add(Arguments.of(type, algorithm));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("typesAndAlgorithms")
    void averagesWhereTheSumWouldSaturate(final DataType type, final String algorithm) throws Exception
    {
        final byte value = type == DataType.FP8_E4M3 ? Fp8Floats.floatToE4m3(256) : Fp8Floats.floatToE5m2(32768);
        final CommConfig config = CommConfig.builder().environment(Map.of()).worldSize(RANKS).algo(algorithm)
            .conclude();
        final List<Communicator> comms = Hccl.initAll(RANKS, config);
        try
        {
            Ranks.onEach(comms, 60, comm ->
            {
                final String where = type + " " + algorithm + " rank " + comm.rank() + ": ";
                final ByteBuffer send = filled(value, COUNT * RANKS);
                final ByteBuffer recv = ByteBuffer.allocateDirect(COUNT * RANKS);

                comm.allReduce(send, recv, COUNT, type, ReduceOp.AVG);
                assertAll(value, recv, COUNT, where + "allReduce");
                assertAll(value, send, COUNT * RANKS, where + "allReduce's input");
                comm.allReduce(recv, recv, COUNT, type, ReduceOp.AVG);
                assertAll(value, recv, COUNT, where + "allReduce in place");

                comm.reduceScatter(send, recv, COUNT, type, ReduceOp.AVG);
                assertAll(value, recv, COUNT, where + "reduceScatter");

                recv.put(0, (byte)0);
                comm.reduce(send, recv, COUNT, type, ReduceOp.AVG, 1);
                if (comm.rank() == 1)
                {
                    assertAll(value, recv, COUNT, where + "reduce at the root");
                }

                final long[] counts = { COUNT, COUNT, COUNT, COUNT };
                final long[] displs = { 0, COUNT, 2 * COUNT, 3 * COUNT };
                comm.reduceScatterV(send, counts, displs, recv, COUNT, type, ReduceOp.AVG);
                assertAll(value, recv, COUNT, where + "reduceScatterV");
                return null;
            });
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    private static ByteBuffer filled(final byte value, final int count)
    {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(count);
        for (int i = 0; i < count; i++)
        {
            buffer.put(i, value);
        }
        return buffer;
    }

    private static void assertAll(final byte expected, final ByteBuffer buffer, final int count, final String what)
    {
        for (int i = 0; i < count; i++)
        {
            assertEquals(expected, buffer.get(i), what + ": element " + i);
        }
    }
}
