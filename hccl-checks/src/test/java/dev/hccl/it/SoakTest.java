package dev.hccl.it;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A soak of mixed collectives and point-to-point with random sizes and types, checked element by element, in real
 * processes, with a small eager budget so that both protocols run: {@code -Dhccl.soak.seconds} (15 by default, kept
 * short for CI) and {@code -Dhccl.soak.seed}.
 */
@Timeout(600)
class SoakTest
{
    @ParameterizedTest(name = "over {0}")
    @ValueSource(strings = {"shm", "tcp"})
    void mixedOperationsOfRandomSizesStayRight(final String transport) throws Exception
    {
        final String seconds = System.getProperty("hccl.soak.seconds", "15");
        final String seed = System.getProperty("hccl.soak.seed", "20261202");
        final Map<String, String> env = Map.of("HCCL_SHM_DISABLE", "tcp".equals(transport) ? "1" : "0",
            "HCCL_EAGER_BUDGET", "262144", "HCCL_EXEC_TIMEOUT", "120");
        try (ProcessJob job = ProcessJob.onPort(TcpConformanceTest.freePort()))
        {
            for (int r = 0; r < 4; r++)
            {
                // The JVM's default tiers, unlike the other process tests' ranks: the soak is where C2's code runs.
                job.startRank(r, 4, List.of(ProcessJob.JAVA), SoakWorker.class, "512m", env, seconds, seed);
            }
            for (int r = 0; r < 4; r++)
            {
                assertEquals(0, job.awaitExit(r, Long.parseLong(seconds) + 240), job.outputs());
                assertTrue(job.output(r).contains("SOAK-OK"), job.outputs());
            }
        }
    }
}
