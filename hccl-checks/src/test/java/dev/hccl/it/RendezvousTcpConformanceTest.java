package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.transport.shm.ShmTransportProvider;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * The conformance suite over TCP with {@code HCCL_EAGER_BUDGET=0}: every message goes by rendezvous (a request to
 * send, the receiver's clear to send once its receive is posted, then the payload), so every algorithm's schedule is
 * checked not to rely on a send completing before its receive is posted.
 */
@Timeout(900)
class RendezvousTcpConformanceTest extends ConformanceSuite
{
    static IntStream worldSizes()
    {
        return IntStream.of(2, 3);
    }

    @Override
    List<Communicator> open(final int n) throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        return Ranks.run(n, 120, rank -> Hccl.init(CommConfig.builder().environment(Map.of())
            .set(ShmTransportProvider.DISABLE, true)
            .rank(rank).worldSize(n).masterAddr("127.0.0.1").masterPort(port)
            .segmentBytes(64 * 1024)
            .eagerBudget(0)
            .connectTimeout(Duration.ofSeconds(60))
            .execTimeout(Duration.ofSeconds(120))
            .conclude()));
    }
}
