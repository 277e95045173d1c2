package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.CommConfigBuilder;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * {@code HCCL_CHECKSUM=1} end to end, ranks as threads with a real rendezvous: an all-reduce of many segments
 * computes right over shared memory and over TCP, and ranks that disagree on the setting all fail at init naming it.
 */
@Timeout(300)
class ChecksumTest
{
    private static CommConfigBuilder config(final int rank, final int n, final int port, final boolean tcp)
    {
        return Ranks.onLoopback(rank, n, port, tcp).segmentBytes(64 * 1024);
    }

    @ParameterizedTest
    @ValueSource(strings = { "shm", "tcp" })
    void anAllReduceOfManySegmentsComputesRight(final String transport) throws Exception
    {
        final int n = 3;
        final int count = (1 << 20) + 3;
        final int port = TcpConformanceTest.freePort();
        final List<Communicator> comms = Ranks.run(n, 120, rank -> Hccl.init(
            config(rank, n, port, "tcp".equals(transport)).set(CommConfig.CHECKSUM, true).conclude()));
        try
        {
            final List<String> errors = Ranks.onEach(comms, 120, comm ->
            {
                assertEquals(transport, comm.transports());
                final ByteBuffer buf = ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder());
                final FloatBuffer f = buf.asFloatBuffer();
                for (int i = 0; i < count; i++)
                {
                    f.put(i, comm.rank() + 1 + i % 7);
                }
                comm.allReduce(buf, buf, count, DataType.FP32, ReduceOp.SUM);
                for (int i = 0; i < count; i++)
                {
                    final float expected = n * (n + 1) / 2 + n * (i % 7);
                    if (f.get(i) != expected)
                    {
                        return "rank " + comm.rank() + ": element " + i + " is " + f.get(i) + ", not " + expected;
                    }
                }
                return null;
            });
            for (final String error : errors)
            {
                assertNull(error);
            }
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    @Test
    void ranksThatDisagreeFailAtInitNamingTheSetting() throws Exception
    {
        // A receiver that expects a CRC its sender does not send would misread every frame: no rank may get that far.
        final int port = TcpConformanceTest.freePort();
        Ranks.assertInitFailsOnEveryRank(2, rank -> config(rank, 2, port, true).set(CommConfig.CHECKSUM, rank == 1)
            .conclude(), "HCCL_CHECKSUM differs: rank 0 has 0, rank 1 has 1");
    }
}
