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
 * The conformance suite over the in-JVM transport with {@code HCCL_EAGER_BUDGET=0}: every message by rendezvous,
 * where the clear to send and the payload it lets go are delivered on the receiver's and sender's threads in turn.
 */
@Timeout(900)
class RendezvousInProcessConformanceTest extends ConformanceSuite
{
    static IntStream worldSizes()
    {
        return IntStream.rangeClosed(1, 5);
    }

    @Override
    List<Communicator> open(final int n)
    {
        return Hccl.initAll(n, CommConfig.builder().environment(Map.of()).worldSize(n).segmentBytes(64 * 1024)
            .eagerBudget(0).execTimeout(Duration.ofSeconds(120)).conclude());
    }
}
