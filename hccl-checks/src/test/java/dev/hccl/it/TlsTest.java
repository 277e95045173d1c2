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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
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

    /**
     * A rank's configuration.
     *
     * @param leaf the certificate's name in {@link #dir} ("rank", "rogue" that another CA signed, or "expired"), or
     *             null for a rank without TLS.
     */
    private static CommConfig config(final int rank, final int n, final int port, final String leaf, final int timeout)
    {
        return CommConfig.builder().environment(tlsFiles(leaf))
            .set(ShmTransportProvider.DISABLE, true)
            .rank(rank).worldSize(n).masterAddr("127.0.0.1").masterPort(port)
            .connectTimeout(Duration.ofSeconds(timeout)).execTimeout(Duration.ofSeconds(60))
            .conclude();
    }

    /** The TLS settings of a rank with certificate {@code leaf}, or none for null. */
    private static Map<String, String> tlsFiles(final String leaf)
    {
        return leaf == null ? Map.of() : Map.of("HCCL_TLS_CERT", dir.resolve(leaf + ".pem").toString(),
            "HCCL_TLS_KEY", dir.resolve(leaf + ".key").toString(), "HCCL_TLS_CA", dir.resolve("ca.pem").toString());
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
        assertEquals("told TLS is required", pokeResult);
    }

    private volatile String pokeResult = "not run";

    /**
     * An outsider without TLS speaks the store's protocol in the clear and proves a guessed job key: it is told that
     * the store requires TLS, as a rank of the job would be, so the answer says nothing of its guess, and it gives up
     * nothing (a rank of the job that proved the key would give the rendezvous up, which the job's success shows this
     * one did not).
     */
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
                // StoreProtocol: magic "HCST", version 4, a 16-byte nonce; the store's mode (1: TLS required) and
                // nonce; a 32-byte proof; the verdict (5: TLS required, as for a right proof; 3 was "refused", which
                // told a guesser its guess was wrong), then this side closes.
                out.write(new byte[]{'H', 'C', 'S', 'T', 4});
                out.write(new byte[16]);
                out.flush();
                final InputStream in = s.getInputStream();
                final byte[] modeAndNonce = in.readNBytes(1 + 16);
                out.write(new byte[32]);
                out.flush();
                final byte[] rest = in.readNBytes(1);
                pokeResult = modeAndNonce.length == 17 && modeAndNonce[0] == 1 && rest.length == 1 && rest[0] == 5 ?
                    "told TLS is required" : "answered " + java.util.Arrays.toString(modeAndNonce) + " then " +
                    java.util.Arrays.toString(rest);
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

    /** The outcome of one rank's init: its error's message or "joined", and when it came. */
    private record Outcome(String said, double seconds)
    {
    }

    private static List<Outcome> join(final int port, final String[] leaves, final int timeoutSeconds)
        throws Exception
    {
        final long start = System.nanoTime();
        return Ranks.run(leaves.length, 120, rank ->
        {
            String said = "joined";
            try (Communicator comm = Hccl.init(config(rank, leaves.length, port, leaves[rank], timeoutSeconds)))
            {
                comm.barrier();
            }
            catch (final HcclException ex)
            {
                said = ex.getMessage();
            }
            return new Outcome(said, (System.nanoTime() - start) / 1e9);
        });
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = { "rogue", "expired" })
    void aRankWhoseCertificateIsRefusedFailsEveryRankAtOnceNamingTls(final String leaf) throws Exception
    {
        final int timeout = 60;
        final List<Outcome> results = join(TcpConformanceTest.freePort(), new String[]{ "rank", leaf, "rank" },
            timeout);
        // The rogue rank tells the store in the clear, proving the job key, so that ranks 0 and 2 stop waiting for it.
        for (final Outcome o : results)
        {
            assertTrue(o.said().contains("rank 1's TLS handshake with rank 0's rendezvous store"), o.said());
            assertTrue(o.said().contains("Check that every rank's HCCL_TLS_CERT is signed by the CA in every " +
                "rank's HCCL_TLS_CA and has not expired"), o.said());
            assertTrue(o.seconds() < timeout / 2.0, "waited " + o.seconds() + " s: " + o.said());
        }
    }

    @Test
    void aRankOfTheJobsCaWithAnotherTokenFailsEveryRankAtOnceNamingTheToken() throws Exception
    {
        // Its certificate proves it a rank of the job, so its refused token may end the rendezvous at once.
        final int timeout = 60;
        final int port = TcpConformanceTest.freePort();
        final long start = System.nanoTime();
        final List<Outcome> results = Ranks.run(2, 120, rank ->
        {
            final CommConfig config = CommConfig.builder().environment(tlsFiles("rank")).rank(rank).worldSize(2)
                .masterAddr("127.0.0.1").masterPort(port).set(ShmTransportProvider.DISABLE, true)
                .jobToken(rank == 0 ? "rank 0's token" : "another token")
                .connectTimeout(Duration.ofSeconds(timeout)).conclude();
            final HcclException ex = assertThrows(HcclException.class, () -> Hccl.init(config).close());
            return new Outcome(ex.getMessage(), (System.nanoTime() - start) / 1e9);
        });
        assertTrue(results.get(0).said().contains("(its certificate is of the job's HCCL_TLS_CA) has another " +
            "HCCL_JOB_TOKEN than rank 0, or none: set the same HCCL_JOB_TOKEN on every rank, or on none"),
            results.get(0).said());
        assertTrue(results.get(1).said().contains("HCCL_JOB_TOKEN differs from rank 0's"), results.get(1).said());
        results.forEach(o -> assertTrue(o.seconds() < timeout / 2.0, "waited " + o.seconds() + " s: " + o.said()));
    }

    @Test
    void tlsOnRankZeroAloneFailsEveryRankAtOnceNamingTls() throws Exception
    {
        final int timeout = 60;
        final List<Outcome> results = join(TcpConformanceTest.freePort(), new String[]{ "rank", null, null }, timeout);
        for (int rank = 1; rank < 3; rank++)
        {
            assertTrue(results.get(rank).said().contains("requires mutual TLS, and this rank has no HCCL_TLS_CERT, " +
                "HCCL_TLS_KEY and HCCL_TLS_CA: set them on every rank, or on none"), results.get(rank).said());
        }
        assertTrue(results.get(0).said().contains("connected to rank 0's store without TLS, but the store requires " +
            "mutual TLS"), results.get(0).said());
        results.forEach(o -> assertTrue(o.seconds() < timeout / 2.0, "waited " + o.seconds() + " s: " + o.said()));
    }

    @Test
    void tlsOnSomeRanksButNotRankZeroFailsEveryRankAtOnceNamingTls() throws Exception
    {
        final int timeout = 60;
        final List<Outcome> results = join(TcpConformanceTest.freePort(), new String[]{ null, "rank", null }, timeout);
        final String expected = "rank 1 uses TLS (HCCL_TLS_CERT, HCCL_TLS_KEY and HCCL_TLS_CA), but rank 0's " +
            "rendezvous store at";
        // Rank 1 tells the store in the clear, proving the job key, so that rank 0 and rank 2 stop waiting for it.
        results.forEach(o -> assertTrue(o.said().contains(expected), o.said()));
        results.forEach(o -> assertTrue(o.seconds() < timeout / 2.0, "waited " + o.seconds() + " s: " + o.said()));
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
