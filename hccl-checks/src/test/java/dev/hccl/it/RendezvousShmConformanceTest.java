package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * The conformance suite over shared memory with an eager budget of 100,000 bytes, less than two 64 KiB segments: a
 * rank that runs ahead sends some messages eagerly and the rest by rendezvous, and the credit its peers give back
 * decides which, so both protocols mix within one operation.
 */
@Timeout(900)
class RendezvousShmConformanceTest extends ConformanceSuite
{
    static IntStream worldSizes()
    {
        return IntStream.of(2, 4);
    }

    @Override
    List<Communicator> open(final int n) throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        return Ranks.run(n, 120, rank -> Hccl.init(CommConfig.builder().environment(Map.of())
            .rank(rank).worldSize(n).masterAddr("127.0.0.1").masterPort(port)
            .segmentBytes(64 * 1024)
            .eagerBudget(100_000)
            .connectTimeout(Duration.ofSeconds(60))
            .execTimeout(Duration.ofSeconds(120))
            .conclude()));
    }
}
