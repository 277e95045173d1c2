package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.transport.netty.TcpTransportProvider;
import dev.hccl.transport.shm.ShmTransportProvider;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * The conformance suite over the TCP transport on loopback, ranks as threads: the bootstrap store, the handshake,
 * framing and streaming receives are all real; only the process boundary is missing (the launcher tests add it).
 */
@Timeout(900)
class TcpConformanceTest extends ConformanceSuite
{
    static IntStream worldSizes()
    {
        return IntStream.of(1, 2, 3, 4, 5, 8);
    }

    @Override
    List<Communicator> open(final int n) throws Exception
    {
        final int port = freePort();
        return Ranks.run(n, 120, rank -> Hccl.init(config(rank, n, port)));
    }

    static CommConfig config(final int rank, final int n, final int port)
    {
        return config(rank, n, port, TcpTransportProvider.IO_THREADS.defaultValue());
    }

    static CommConfig config(final int rank, final int n, final int port, final int ioThreads)
    {
        return CommConfig.builder().environment(Map.of())
            .set(TcpTransportProvider.IO_THREADS, ioThreads)
            // Ranks as threads share a node: without this they would talk through shared memory.
            .set(ShmTransportProvider.DISABLE, true)
            .rank(rank).worldSize(n).masterAddr("127.0.0.1").masterPort(port)
            .segmentBytes(64 * 1024)
            .connectTimeout(Duration.ofSeconds(60))
            .execTimeout(Duration.ofSeconds(120))
            .conclude();
    }

    static int freePort() throws IOException
    {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            return s.getLocalPort();
        }
    }
}
