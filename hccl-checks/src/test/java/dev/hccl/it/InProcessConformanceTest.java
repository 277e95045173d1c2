package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * The conformance suite over the in-JVM transport, world sizes 1 to 9.
 */
@Timeout(900)
class InProcessConformanceTest extends ConformanceSuite
{
    static IntStream worldSizes()
    {
        return IntStream.rangeClosed(1, 9);
    }

    @Override
    List<Communicator> open(final int n)
    {
        return Hccl.initAll(n, CommConfig.builder().environment(Map.of()).worldSize(n).segmentBytes(64 * 1024)
            .execTimeout(java.time.Duration.ofSeconds(120)).conclude());
    }
}
