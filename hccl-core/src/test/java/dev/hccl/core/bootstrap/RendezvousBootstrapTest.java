package dev.hccl.core.bootstrap;

import dev.hccl.api.CommConfig;
import dev.hccl.api.CommConfigBuilder;
import dev.hccl.api.testing.Tee;
import dev.hccl.api.spi.Bootstrap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The store as transports see it through a real rendezvous of two ranks: values and counters cross ranks, and each
 * transport's keys are its own.
 */
@Timeout(60)
class RendezvousBootstrapTest
{
    @Test
    void countersAndValuesCrossRanksAndEachTransportHasItsOwnKeys() throws Exception
    {
        final int port;
        try (ServerSocket s = new ServerSocket(0))
        {
            port = s.getLocalPort();
        }
        final ExecutorService ranks = Executors.newFixedThreadPool(2); // both join at once, whatever the cores
        final List<CompletableFuture<Rendezvous>> joins = List.of(join(0, port, ranks), join(1, port, ranks));
        ranks.shutdown();
        try (Rendezvous r0 = joins.get(0).get(30, TimeUnit.SECONDS);
            Rendezvous r1 = joins.get(1).get(30, TimeUnit.SECONDS))
        {
            final Bootstrap shm0 = r0.bootstrap("shm");
            final Bootstrap shm1 = r1.bootstrap("shm");
            assertEquals(Set.of(1L, 2L), Set.of(shm0.add("name-taken", 1), shm1.add("name-taken", 1)),
                "one rank comes first");
            assertEquals(1L, r1.bootstrap("tcp").add("name-taken", 1), "another transport's counter");
            shm0.put("created", "ok".getBytes(StandardCharsets.UTF_8));
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            assertArrayEquals("ok".getBytes(StandardCharsets.UTF_8), shm1.get("created", deadline));
            assertEquals(null, r1.bootstrap("tcp").get("created", System.nanoTime() + 50_000_000L),
                "another transport's value");
        }
    }

    /**
     * A job without a token on loopback is open to every user of the host, who can read the token rank 0 hands out:
     * rank 0 says so once. With a token, nothing is said.
     */
    @Test
    void aJobWithoutATokenOnLoopbackSaysOnceThatAnyLocalUserCanJoin() throws Exception
    {
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        final PrintStream stderr = System.err;
        System.setErr(new PrintStream(new Tee(stderr, captured), true, StandardCharsets.UTF_8));
        try
        {
            joinBoth(null);
            final List<String> warnings = warnings(captured);
            assertEquals(1, warnings.size(), warnings.toString());
            assertTrue(warnings.get(0).contains("rank 0: no HCCL_JOB_TOKEN is set: any user of this host can connect " +
                "to 127.0.0.1:") && warnings.get(0).contains("set HCCL_JOB_TOKEN to the same secret on " +
                "every rank"), warnings.get(0));
            captured.reset();
            joinBoth("the job's secret");
            assertEquals(List.of(), warnings(captured));
        }
        finally
        {
            System.setErr(stderr);
        }
    }

    private static List<String> warnings(final ByteArrayOutputStream captured)
    {
        return captured.toString(StandardCharsets.UTF_8).lines().filter(l -> l.contains("WARN")).toList();
    }

    private static void joinBoth(final String token) throws Exception
    {
        final int port;
        try (ServerSocket s = new ServerSocket(0))
        {
            port = s.getLocalPort();
        }
        final ExecutorService ranks = Executors.newFixedThreadPool(2);
        final List<CompletableFuture<Rendezvous>> joins =
            List.of(join(0, port, ranks, token), join(1, port, ranks, token));
        ranks.shutdown();
        try (Rendezvous r0 = joins.get(0).get(30, TimeUnit.SECONDS);
            Rendezvous r1 = joins.get(1).get(30, TimeUnit.SECONDS))
        {
            assertEquals(r0.commId(), r1.commId());
        }
    }

    private static CompletableFuture<Rendezvous> join(final int rank, final int port, final ExecutorService ranks)
    {
        return join(rank, port, ranks, null);
    }

    private static CompletableFuture<Rendezvous> join(
        final int rank, final int port, final ExecutorService ranks, final String token)
    {
        final CommConfigBuilder builder = CommConfig.builder().environment(Map.of()).rank(rank).worldSize(2)
            .masterAddr("127.0.0.1").masterPort(port).connectTimeout(Duration.ofSeconds(30));
        final CommConfig config = (token == null ? builder : builder.jobToken(token)).conclude();
        return CompletableFuture.supplyAsync(() -> Rendezvous.join(config, "", System.nanoTime() +
            TimeUnit.SECONDS.toNanos(30)), ranks);
    }
}
