package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.JobKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13's first finding, in real processes: during start-up an outsider asks rank 0's store for the token (the
 * request that used to be served, and the current protocol's opening without a proof). It hears nothing of the token,
 * and the job computes right.
 */
@Timeout(120)
class OutsiderTest
{
    private static final String TOKEN = "the-jobs-secret-token-4f1c";
    /** The store protocol's version (StoreProtocol.VERSION), which the current opening names. */
    private static final int STORE_VERSION = 4;
    /** The store's bytes for a current opening with a wrong proof: the clear mode, its nonce, REFUSED. */
    private static final int CHALLENGE_REFUSED_BYTES = 1 + JobKey.NONCE_BYTES + 1;
    /** StoreProtocol.REFUSED. */
    private static final byte REFUSED = 3;

    /** A rank of a 2-rank job; rank 1 arrives 3 s late, so that the store waits meanwhile. Prints {@code SUM a,b}. */
    public static final class LateJoiner
    {
        private LateJoiner()
        {
        }

        /**
         * @param args unused.
         * @throws Exception on any failure.
         */
        public static void main(final String[] args) throws Exception
        {
            if ("1".equals(System.getenv("RANK")))
            {
                Thread.sleep(3000);
            }
            try (Communicator comm = Hccl.init())
            {
                final int[] value = {comm.rank() + 1, 10 * (comm.rank() + 1)};
                comm.allReduce(value, ReduceOp.SUM);
                System.out.println("SUM " + value[0] + "," + value[1]);
            }
        }
    }

    @Test
    void anOutsiderAtTheStoreOfARealJobLearnsNothingAndTheJobRuns() throws Exception
    {
        try (ProcessJob job = ProcessJob.start(2, LateJoiner.class, "256m", Map.of("HCCL_JOB_TOKEN", TOKEN)))
        {
            final int port = Integer.parseInt(job.environment("MASTER_PORT"));
            final String oldRequest = ask(port, true);
            final byte[] newOpening = heard(port, false);
            for (final String heard : new String[]{oldRequest, described(newOpening)})
            {
                assertFalse(heard.contains(TOKEN), "the store served the token: " + heard);
            }
            // The current opening reached the challenge (the version is the store's): the mode, a nonce, REFUSED.
            assertEquals(CHALLENGE_REFUSED_BYTES, newOpening.length, described(newOpening));
            assertEquals(REFUSED, newOpening[newOpening.length - 1], described(newOpening));
            for (int r = 0; r < 2; r++)
            {
                assertEquals(0, job.awaitExit(r, 60), job.outputs());
                assertTrue(job.output(r).contains("SUM 3,30"), job.outputs());
            }
        }
    }

    /**
     * Connects to the store, retrying until rank 0 serves it, and sends either the old protocol's request for the token
     * or the current opening followed by a made-up proof; returns every byte heard before the store closes or 10
     * seconds of silence pass. Each is sent in one write: a store that closes on the first bytes it dislikes (the old
     * request's version) must not make a later write of the client fail with a reset, which is the outsider's problem,
     * not the test's.
     */
    static String ask(final int port, final boolean oldRequest) throws Exception
    {
        return described(heard(port, oldRequest));
    }

    /** Bytes heard as text and as numbers. */
    private static String described(final byte[] heard)
    {
        return new String(heard, StandardCharsets.ISO_8859_1) + " " + Arrays.toString(heard);
    }

    /** What {@link #ask} hears, as bytes. */
    private static byte[] heard(final int port, final boolean oldRequest) throws Exception
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(0x48435354); // "HCST"
        if (oldRequest)
        {
            out.writeByte(2); // GET, as version 1 had it
            out.writeUTF("token");
            out.writeLong(1_000);
        }
        else
        {
            out.writeByte(STORE_VERSION);
            out.write(new byte[JobKey.NONCE_BYTES]); // a nonce
            out.write(new byte[JobKey.PROOF_BYTES]); // a proof made up
        }
        final long deadline = System.nanoTime() + 30_000_000_000L;
        while (true)
        {
            try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port))
            {
                socket.getOutputStream().write(bytes.toByteArray());
                socket.setSoTimeout(10_000); // the store closes when it is done; this bounds a silent one
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
                return heard.toByteArray();
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
