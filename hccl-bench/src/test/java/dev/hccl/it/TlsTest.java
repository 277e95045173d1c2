package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.ReduceOp;
import dev.hccl.transport.shm.ShmTransportProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Mutual TLS for the store and the TCP transport ({@code HCCL_TLS_CERT}, {@code HCCL_TLS_KEY}, {@code HCCL_TLS_CA}),
 * with certificates made by openssl for the test: a job with the CA's certificates computes right; a rank whose
 * certificate another CA signed cannot join; a client that does not speak TLS gets nothing from the store.
 */
@Timeout(180)
class TlsTest
{
    @TempDir
    static Path dir;

    @BeforeAll
    static void makeCertificates() throws Exception
    {
        // tools/tls-certs.sh, from the module's directory, where the tests run.
        final Process p = new ProcessBuilder("bash", Path.of("..", "tools", "tls-certs.sh").toString(),
            dir.toString()).redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "tools/tls-certs.sh:\n" + out);
    }

    private static CommConfig config(final int rank, final int n, final int port, final String leaf, final int timeout)
    {
        return CommConfig.builder().environment(Map.of("HCCL_TLS_CERT", dir.resolve(leaf + ".pem").toString(),
                "HCCL_TLS_KEY", dir.resolve(leaf + ".key").toString(), "HCCL_TLS_CA", dir.resolve("ca.pem").toString()))
            .set(ShmTransportProvider.DISABLE, true)
            .rank(rank).worldSize(n).masterAddr("127.0.0.1").masterPort(port)
            .connectTimeout(Duration.ofSeconds(timeout)).execTimeout(Duration.ofSeconds(60))
            .conclude();
    }

    @Test
    void aJobOverMutualTlsComputesRightWhileAPlaintextClientGetsNothingFromTheStore() throws Exception
    {
        final int n = 3;
        final int port = TcpConformanceTest.freePort();
        final Thread outsider = new Thread(() -> poke(port));
        outsider.start();
        final List<Float> sums = Ranks.run(n, 120, rank ->
        {
            try (Communicator comm = Hccl.init(config(rank, n, port, "rank", 60)))
            {
                final ByteBuffer b = ByteBuffer.allocateDirect(4 << 20).order(ByteOrder.nativeOrder());
                for (int i = 0; i < 1 << 20; i++)
                {
                    b.putFloat(4 * i, rank + 1);
                }
                comm.allReduce(b, b, 1 << 20, DataType.FP32, ReduceOp.SUM);
                for (int i = 0; i < 1 << 20; i++)
                {
                    assertEquals(6f, b.getFloat(4 * i), "element " + i);
                }
                assertEquals("tcp", comm.transportTo((rank + 1) % n));
                return b.getFloat(0);
            }
        });
        outsider.join();
        assertEquals(List.of(6f, 6f, 6f), sums);
        assertTrue(pokeResult.startsWith("no plaintext answer"), pokeResult);
    }

    private volatile String pokeResult = "not run";

    /** An outsider without TLS speaks the store's plaintext protocol to it, and reads what comes back. */
    private void poke(final int port)
    {
        final long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline)
        {
            try (Socket s = new Socket())
            {
                s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                s.setSoTimeout(5000);
                final OutputStream out = s.getOutputStream();
                out.write(new byte[]{'H', 'C', 'S', 'T', 0, 2});
                out.write(new byte[32]);
                out.flush();
                final InputStream in = s.getInputStream();
                final byte[] got = in.readNBytes(6);
                // A TLS server answers a plaintext hello with an alert record (0x15) or closes; never the store's
                // own bytes.
                pokeResult = got.length == 0 || got[0] == 0x15 ? "no plaintext answer (" + got.length + " bytes)" :
                    "the store answered in plaintext: " + java.util.Arrays.toString(got);
                return;
            }
            catch (final java.io.IOException ex)
            {
                pokeResult = "no plaintext answer (" + ex + ")";
                if (!(ex instanceof java.net.ConnectException))
                {
                    return;
                }
                try
                {
                    Thread.sleep(20);
                }
                catch (final InterruptedException ie)
                {
                    return;
                }
            }
        }
    }

    @Test
    void aRankWhoseCertificateAnotherCaSignedCannotJoin() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final List<String> results = Ranks.run(2, 120, rank ->
        {
            try (Communicator comm = Hccl.init(config(rank, 2, port, rank == 1 ? "rogue" : "rank", 8)))
            {
                return "joined";
            }
            catch (final HcclException ex)
            {
                return ex.getMessage();
            }
        });
        assertTrue(results.get(1).contains("store"), results.get(1));
        assertTrue(results.get(1).contains("Under mutual TLS the store also refuses a rank whose certificate"),
            "the rogue rank is told what TLS requires: " + results.get(1));
        assertTrue(results.get(0).contains("did not arrive"), results.get(0));
    }

    @Test
    void onlySomeOfTheThreeVariablesIsAnError()
    {
        final HcclException ex = assertThrows(HcclException.class, () -> Hccl.init(CommConfig.builder()
            .environment(Map.of("HCCL_TLS_CERT", "/nonexistent.pem")).rank(0).worldSize(2).masterAddr("127.0.0.1")
            .masterPort(1).connectTimeout(Duration.ofSeconds(2)).conclude()));
        assertTrue(ex.getMessage().contains("missing: HCCL_TLS_KEY HCCL_TLS_CA"), ex.getMessage());
    }
}
