package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.CommConfigBuilder;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The job is authenticated at the rendezvous store (issue 13's first finding): over real TCP, an outsider who reaches
 * {@code MASTER_PORT} while the job starts learns no token and cannot join, the job runs on with the right numbers,
 * and a rank with another token fails at once, saying so.
 */
@Timeout(120)
class JobAuthenticationTest
{
    private static final String TOKEN = "a secret only this job's ranks hold";
    /** The store's magic, "HCST", as a client opens with it. */
    private static final int STORE_MAGIC = 0x48435354;
    /** The GET request code of the store's protocol. */
    private static final int GET = 2;

    private static CommConfigBuilder tcp(final int rank, final int port, final String token, final int seconds)
    {
        return CommConfig.builder().environment(Map.of()).rank(rank).worldSize(2).masterAddr("127.0.0.1")
            .masterPort(port).jobToken(token).connectTimeout(Duration.ofSeconds(seconds));
    }

    @Test
    void anOutsiderAtTheStoreDuringStartUpLearnsNothingAndTheJobRuns() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final List<int[]> results = Ranks.run(2, 90, rank ->
        {
            if (rank == 1)
            {
                // Rank 1 is late: meanwhile an outsider asks rank 0's store for the token, as before the fix.
                final String heard = outsiderAsksForTheToken(port);
                assertFalse(heard.contains(TOKEN), "the store served the token: " + heard);
            }
            try (Communicator comm = Hccl.init(tcp(rank, port, TOKEN, 60).conclude()))
            {
                final int[] value = {rank + 1, 10 * (rank + 1)};
                comm.allReduce(value, ReduceOp.SUM);
                return value;
            }
        });
        assertArrayEquals(new int[] {3, 30}, results.get(0));
        assertArrayEquals(new int[] {3, 30}, results.get(1));
    }

    @Test
    void aRankWithAnotherTokenFailsAtOnceNamingTheVariable() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final List<String> outcomes = Ranks.run(2, 60, rank ->
        {
            final long start = System.nanoTime();
            final HcclException ex = assertThrows(HcclException.class,
                () -> Hccl.init(tcp(rank, port, rank == 0 ? TOKEN : "another job's token", 8).conclude()).close());
            return (System.nanoTime() - start) / 1_000_000 + " ms: " + ex.getMessage();
        });
        final String rank1 = outcomes.get(1);
        assertTrue(rank1.contains("HCCL_JOB_TOKEN differs from rank 0's"), rank1);
        assertTrue(Long.parseLong(rank1.substring(0, rank1.indexOf(' '))) < 5_000, "rank 1 failed fast: " + rank1);
    }

    /**
     * Connects to the store at the port, retrying until rank 0 serves it, sends the old protocol's request for the
     * token, and returns every byte the store sends back before it closes or a second passes.
     */
    private static String outsiderAsksForTheToken(final int port) throws IOException, InterruptedException
    {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true)
        {
            try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port))
            {
                final DataOutputStream out = new DataOutputStream(socket.getOutputStream());
                out.writeInt(STORE_MAGIC);
                out.writeByte(GET);
                out.writeUTF("token");
                out.writeLong(1_000);
                out.flush();
                socket.setSoTimeout(1_000);
                final ByteArrayOutputStream heard = new ByteArrayOutputStream();
                final InputStream in = socket.getInputStream();
                try
                {
                    for (int b = in.read(); b >= 0; b = in.read())
                    {
                        heard.write(b);
                    }
                }
                catch (final SocketTimeoutException | SocketException ex)
                {
                    // silence or a reset: what was heard is all there is
                }
                return heard.toString(StandardCharsets.ISO_8859_1);
            }
            catch (final ConnectException ex)
            {
                if (System.nanoTime() > deadline)
                {
                    throw ex;
                }
                Thread.sleep(20);
            }
        }
    }
}
