package dev.hccl.transport.netty;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The kernel's timeout for unacknowledged data is a backstop behind the heartbeat. With both at the heartbeat timeout,
 * the heartbeat's verdict (its tick is up to a second late) and the kernel's timer (started when a stopped rank's
 * receive window filled) raced: one full build's FrozenRankTest over TCP got a bare "Connection timed out" instead of
 * the heartbeat's words naming the rank frozen (not reproduced in 12 runs of the test alone, with and without load).
 */
class TcpSocketOptionsTest
{
    @ParameterizedTest(name = "heartbeat timeout {0} s")
    @ValueSource(ints = {1, 3, 30, 600})
    void theKernelGivesUpAfterTheHeartbeatHasSpokenWithASecondToSpare(final int seconds)
    {
        final long heartbeatVerdictMillis =
            seconds * 1000L + TimeUnit.NANOSECONDS.toMillis(Heartbeat.MAX_INTERVAL_NANOS);
        final int kernel = TcpSocketOptions.kernelTimeoutMillis(Duration.ofSeconds(seconds));
        assertTrue(kernel >= heartbeatVerdictMillis + 1000, "TCP_USER_TIMEOUT " + kernel + " ms for a heartbeat " +
            "verdict by " + heartbeatVerdictMillis + " ms");
        assertTrue(kernel <= 2 * seconds * 1000L + 2000, "TCP_USER_TIMEOUT " + kernel + " ms: a backstop, not a " +
            "second timeout far later than the heartbeat's");
    }
}
