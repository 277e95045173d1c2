package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.stream.IntStream;

/**
 * The conformance suite over TCP with I/O threads of the transport's own ({@code HCCL_IO_THREADS=2}) rather than
 * the default, where the waiting thread performs the I/O: both ways of driving Netty must give the same bits.
 */
@Timeout(900)
class TcpIoThreadsConformanceTest extends ConformanceSuite
{
    static IntStream worldSizes()
    {
        return IntStream.of(2, 3);
    }

    @Override
    List<Communicator> open(final int n) throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        return Ranks.run(n, 120, rank -> Hccl.init(TcpConformanceTest.config(rank, n, port, 2)));
    }
}
