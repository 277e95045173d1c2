package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The conformance suite over the shared-memory transport, ranks as threads of this JVM: each rank maps its pairs'
 * segments as a process would, and the rendezvous is real; {@link RealProcessTest} adds the process boundary.
 */
@Timeout(900)
class ShmConformanceTest extends ConformanceSuite
{
    static IntStream worldSizes()
    {
        return IntStream.of(1, 2, 3, 4, 5, 8);
    }

    @Override
    List<Communicator> open(final int n) throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final List<Communicator> comms = Ranks.run(n, 120, rank -> Hccl.init(CommConfig.builder()
            .environment(Map.of())
            .rank(rank).worldSize(n).masterAddr("127.0.0.1").masterPort(port)
            .segmentBytes(64 * 1024)
            .connectTimeout(Duration.ofSeconds(60))
            .execTimeout(Duration.ofSeconds(120))
            .conclude()));
        for (final Communicator comm : comms)
        {
            assertEquals(n == 1 ? "none" : "shm", comm.transports(), "ranks of one node choose shared memory");
        }
        return comms;
    }
}
