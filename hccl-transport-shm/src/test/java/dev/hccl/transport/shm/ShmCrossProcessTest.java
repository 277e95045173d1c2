package dev.hccl.transport.shm;

import dev.hccl.api.HcclException;
import dev.hccl.api.spi.PeerEndpoint;
import dev.hccl.api.testing.RecordingInbound;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two processes on real shared memory: the segment carries a message from the other JVM, nothing is left in the
 * directory after connect, and a SIGKILL of the other process is noticed from its pid and leaves nothing behind.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmCrossProcessTest
{
    private ShmCluster cluster;
    private Process child;

    @AfterEach
    void tearDown() throws Exception
    {
        if (null != child)
        {
            child.destroyForcibly();
        }
        if (null != cluster)
        {
            cluster.close();
        }
    }

    @Test
    void aRankInAnotherProcessConnectsSendsAndIsNoticedDeadAfterSigkill(@TempDir final Path bootstrapDir)
        throws Exception
    {
        cluster = new ShmCluster();
        final FileBootstrap bootstrap = new FileBootstrap(bootstrapDir);
        final RecordingInbound in = new RecordingInbound();
        final ShmTransport t0 = new ShmTransport(new dev.hccl.api.spi.TransportContext(0, 2, ShmCluster.COMM_ID,
            "token", ShmCluster.NODE, InetAddress.getLoopbackAddress(), ShmCluster.config(0, 2, cluster.dir), in,
            bootstrap), cluster.dir);
        cluster.transports.add(t0);
        bootstrap.put("address/0", t0.localAddress());

        final List<String> command = new ArrayList<>(List.of(
            ProcessHandle.current().info().command().orElse("java"),
            "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "-cp", System.getProperty("java.class.path"),
            ShmChildRank.class.getName(), cluster.dir.toString(), bootstrapDir.toString()));
        child = new ProcessBuilder(command).redirectErrorStream(true).start();

        final byte[] one = bootstrap.get("address/1", System.nanoTime() + TimeUnit.SECONDS.toNanos(20));
        final Future<Set<Integer>> c0 = cluster.connectAsync(t0, ShmCluster.endpoint(0, t0),
            List.of(new PeerEndpoint(1, ShmCluster.NODE, one)), 0, 20_000);
        assertEquals(Set.of(1), c0.get(30, TimeUnit.SECONDS));
        assertEquals(List.of(), cluster.files(), "files left after connect");

        final BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
            StandardCharsets.UTF_8));
        final StringBuilder said = new StringBuilder();
        String line;
        while (null != (line = out.readLine()) && !"sent".equals(line))
        {
            said.append(line).append('\n');
        }
        assertEquals("sent", line, "the child rank ended, saying: " + said);
        final RecordingInbound.Message m = in.nextMessage();
        assertEquals(1, m.from());
        assertEquals("pid " + child.pid(), new String(m.data(), StandardCharsets.UTF_8));

        child.destroyForcibly().waitFor();
        final long start = System.nanoTime();
        final RecordingInbound.Failure f = in.nextFailure();
        final long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertEquals(1, f.peer());
        assertEquals("rank 1 (pid " + child.pid() + ") died", ((HcclException)f.cause()).detail());
        assertTrue(ms < 2_000, "noticed after " + ms + " ms");
        assertEquals(List.of(), cluster.files(), "files left after the kill");
    }
}
