package dev.hccl.core.bootstrap;

import dev.hccl.api.HcclException;
import dev.hccl.api.spi.JobKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The rendezvous store serves only clients that prove the job key over fresh nonces, and bounds what any client can
 * make it hold: an outsider at the port during start-up learns nothing and stores nothing.
 */
@Timeout(60)
class StoreSecurityTest
{
    private static final JobKey KEY = JobKey.of("the job's secret");
    private static final StoreLimits LIMITS = new StoreLimits(4, 4, 4, 4096, 500, 1_000, 0);

    private static StoreServer start(final JobKey key, final StoreLimits limits) throws IOException
    {
        return StoreServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), key, limits);
    }

    private static InetSocketAddress at(final StoreServer server)
    {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port());
    }

    private static long inSeconds(final int seconds)
    {
        return System.nanoTime() + seconds * 1_000_000_000L;
    }

    @Test
    void aClientWithTheTokenIsServed() throws IOException
    {
        try (StoreServer server = start(KEY, LIMITS);
            StoreClient a = StoreClient.connect(at(server), 0, inSeconds(5), JobKey.of("the job's secret"));
            StoreClient b = StoreClient.connect(at(server), 1, inSeconds(5), KEY))
        {
            a.set("k", "v");
            assertEquals("v", b.getString("k", inSeconds(5)));
            assertEquals(1, b.add("n", 1));
        }
    }

    @Test
    void aClientWithAnotherTokenIsRefusedAndToldWhy() throws IOException
    {
        try (StoreServer server = start(KEY, LIMITS))
        {
            final HcclException ex = assertThrows(HcclException.class,
                () -> StoreClient.connect(at(server), 1, inSeconds(5), JobKey.of("another job")));
            assertTrue(ex.getMessage().contains("HCCL_JOB_TOKEN differs from rank 0's"), ex.getMessage());
            // A job without a token (the public key) cannot join a job with one either.
            assertThrows(HcclException.class, () -> StoreClient.connect(at(server), 1, inSeconds(5), JobKey.of("")));
        }
    }

    /** The outsider of the issue: it connects during start-up and asks for the token without knowing it. */
    @Test
    void anOutsiderWithoutTheTokenGetsNothing() throws IOException
    {
        try (StoreServer server = start(KEY, LIMITS);
            StoreClient rank0 = StoreClient.connect(at(server), 0, inSeconds(5), KEY);
            Socket outsider = new Socket(InetAddress.getLoopbackAddress(), server.port()))
        {
            rank0.set("comm_id", "42");
            final DataOutputStream out = new DataOutputStream(outsider.getOutputStream());
            final DataInputStream in = new DataInputStream(outsider.getInputStream());
            out.writeInt(StoreProtocol.MAGIC);
            out.writeByte(StoreProtocol.VERSION);
            out.write(new byte[JobKey.NONCE_BYTES]);
            out.flush();
            assertEquals(StoreProtocol.MODE_CLEAR, in.readByte());
            in.readFully(new byte[JobKey.NONCE_BYTES]);
            // A guessed proof is refused, and the connection closed before any request.
            out.write(new byte[JobKey.PROOF_BYTES]);
            out.flush();
            assertEquals(StoreProtocol.REFUSED, in.readByte());
            assertClosed(in);
        }
    }

    /** A proof recorded from one connection is worth nothing in the next: the store's nonce differs. */
    @Test
    void aReplayedProofIsRefused() throws IOException
    {
        try (StoreServer server = start(KEY, LIMITS))
        {
            final byte[] clientNonce = JobKey.nonce();
            final byte[] recorded;
            try (Socket first = new Socket(InetAddress.getLoopbackAddress(), server.port()))
            {
                final DataInputStream in = new DataInputStream(first.getInputStream());
                final byte[] serverNonce = hello(first, clientNonce, in);
                recorded = KEY.prove(StoreProtocol.CLIENT_ROLE, serverNonce, clientNonce);
                final DataOutputStream out = new DataOutputStream(first.getOutputStream());
                out.write(recorded);
                out.flush();
                assertEquals(StoreProtocol.OK, in.readByte());
                final byte[] proof = new byte[JobKey.PROOF_BYTES];
                in.readFully(proof);
                assertTrue(KEY.verify(proof, StoreProtocol.SERVER_ROLE, clientNonce, serverNonce),
                    "the store proves the key after the client did");
            }
            try (Socket replay = new Socket(InetAddress.getLoopbackAddress(), server.port()))
            {
                final DataInputStream in = new DataInputStream(replay.getInputStream());
                final byte[] serverNonce = hello(replay, clientNonce, in);
                assertFalse(Arrays.equals(new byte[JobKey.NONCE_BYTES], serverNonce));
                final DataOutputStream out = new DataOutputStream(replay.getOutputStream());
                out.write(recorded);
                out.flush();
                assertEquals(StoreProtocol.REFUSED, in.readByte());
            }
        }
    }

    /**
     * The client checks the store too: an impostor at the port that takes any proof and answers OK, but cannot prove
     * the key itself, is not believed.
     */
    @Test
    void aStoreWithoutTheTokenIsNotBelieved() throws Exception
    {
        try (ServerSocket impostor = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            final Thread answering = new Thread(() ->
            {
                try (Socket s = impostor.accept())
                {
                    final DataInputStream in = new DataInputStream(s.getInputStream());
                    final DataOutputStream out = new DataOutputStream(s.getOutputStream());
                    in.readFully(new byte[4 + 1 + JobKey.NONCE_BYTES]);
                    out.writeByte(StoreProtocol.MODE_CLEAR);
                    out.write(JobKey.nonce());
                    out.flush();
                    in.readFully(new byte[JobKey.PROOF_BYTES]);
                    out.writeByte(StoreProtocol.OK);
                    out.write(new byte[JobKey.PROOF_BYTES]);
                    out.flush();
                    in.read();
                }
                catch (final IOException ignore)
                {
                    // the client hung up, as it should
                }
            });
            answering.start();
            final InetSocketAddress at = new InetSocketAddress(InetAddress.getLoopbackAddress(), impostor.getLocalPort());
            final HcclException ex =
                assertThrows(HcclException.class, () -> StoreClient.connect(at, 1, inSeconds(5), KEY));
            assertTrue(ex.getMessage().contains("does not know this job's token"), ex.getMessage());
            answering.join(5_000);
        }
    }

    @Test
    void silentAndIdleClientsAreClosed() throws IOException
    {
        try (StoreServer server = start(KEY, LIMITS))
        {
            final long start = System.nanoTime();
            try (Socket silent = new Socket(InetAddress.getLoopbackAddress(), server.port()))
            {
                silent.setSoTimeout(5_000);
                // A client that trickles its hello byte by byte is closed at the challenge's deadline all the same.
                final DataOutputStream out = new DataOutputStream(silent.getOutputStream());
                for (int i = 0; i < 3; i++)
                {
                    out.writeByte(0x48);
                    out.flush();
                    sleep(150);
                }
                assertClosed(new DataInputStream(silent.getInputStream()));
            }
            final long millis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(millis < 4_000, "closed after " + millis + " ms, challenge limit 500");
        }
        try (StoreServer server = start(KEY, LIMITS);
            StoreClient idle = StoreClient.connect(at(server), 0, inSeconds(30), KEY))
        {
            sleep(LIMITS.idleMillis() + 500);
            assertThrows(HcclException.class, () -> idle.set("k", "v"), "the store closed an idle client");
        }
    }

    /**
     * The attack of a stranger on the host (another user, or the job's own address): connections that send one byte
     * and then nothing, more of them than the store serves. Before the store bounded them apart from the admitted, they
     * held every slot until their deadline (3 s), and the ranks failed at their connect timeout.
     */
    @Test
    void aStrangersConnectionsInTheChallengeNeverKeepARankOut() throws IOException
    {
        final StoreLimits limits = StoreLimits.forJob(2, java.time.Duration.ofSeconds(30));
        final List<Socket> strangers = new ArrayList<>();
        try (StoreServer server = start(KEY, limits))
        {
            server.serveStatus(() -> "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            try
            {
                for (int i = 0; i < limits.maxChallenges() + limits.maxClients(); i++)
                {
                    final Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port());
                    s.getOutputStream().write(StoreProtocol.MAGIC >>> 24);
                    strangers.add(s);
                }
                // Within the challenge's deadline (3 s), as a rank that must not wait for the strangers to time out.
                try (StoreClient rank = StoreClient.connect(at(server), 0, inSeconds(2), KEY);
                    StoreClient status = StoreClient.connect(at(server), -1, inSeconds(2), KEY))
                {
                    rank.set("k", "v");
                    assertEquals("v", rank.getString("k", inSeconds(2)));
                    assertEquals("{}", new String(status.status(), java.nio.charset.StandardCharsets.UTF_8));
                }
                // The store made room by closing the strangers' oldest, and says so for the ranks' message.
                strangers.get(0).setSoTimeout(2_000);
                assertClosed(new DataInputStream(strangers.get(0).getInputStream()));
                final String crowded = server.crowdedOut();
                assertTrue(crowded != null && crowded.endsWith("that had not proven the job token (the last from " +
                    InetAddress.getLoopbackAddress().getHostAddress() + ")"), crowded);
            }
            finally
            {
                for (final Socket s : strangers)
                {
                    s.close();
                }
            }
        }
    }

    @Test
    void clientsThatProvedTheKeyBeyondTheCapAreToldToTryAgain() throws IOException
    {
        final StoreLimits limits = new StoreLimits(2, 8, 8, 4096, 5_000, 5_000, 0);
        try (StoreServer server = start(KEY, limits))
        {
            final StoreClient first = StoreClient.connect(at(server), 0, inSeconds(5), KEY);
            try (StoreClient second = StoreClient.connect(at(server), 1, inSeconds(5), KEY))
            {
                final HcclException full =
                    assertThrows(HcclException.class, () -> StoreClient.connect(at(server), 2, inSeconds(1), KEY));
                assertEquals(dev.hccl.api.ErrorCode.E_TCP_CONNECT, full.errorCode());
                assertTrue(full.getMessage().contains("turned this rank away") && full.getMessage().contains(
                    "it serves as many clients that proved the job token as it may"), full.getMessage());
                first.close();
                // A seat is free once a client leaves: the next one tries until it gets it.
                try (StoreClient third = StoreClient.connect(at(server), 2, inSeconds(5), KEY))
                {
                    third.set("k", "v");
                    assertEquals("v", second.getString("k", inSeconds(5)));
                }
            }
        }
    }

    /** A store that closes every connection before it answers: the rank's error says what that means. */
    @Test
    void aRankTurnedAwayBeforeTheChallengeSaysTheStoreIsCrowded() throws IOException, InterruptedException
    {
        try (ServerSocket crowded = new ServerSocket(0, 50, InetAddress.getLoopbackAddress()))
        {
            final Thread closer = new Thread(() ->
            {
                while (!crowded.isClosed())
                {
                    try
                    {
                        crowded.accept().close();
                    }
                    catch (final IOException ex)
                    {
                        return;
                    }
                }
            });
            closer.start();
            final HcclException ex = assertThrows(HcclException.class, () -> StoreClient.connect(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), crowded.getLocalPort()), 3, inSeconds(1), KEY));
            crowded.close();
            closer.join();
            assertEquals(dev.hccl.api.ErrorCode.E_TCP_CONNECT, ex.errorCode());
            assertTrue(ex.getMessage().contains("rank 0's rendezvous store at ") &&
                ex.getMessage().contains("it closed each connection before it answered the challenge, as it does " +
                "when it is full of connections that have not proven the job token"), ex.getMessage());
        }
    }

    /**
     * A stranger guessing tokens hears of each wrong guess later and later: about 2,000 guesses a second from one
     * address before, a few dozen at most now. The first few are answered at once, as a rank with another token must
     * hear promptly. Lower bounds only: a busy machine makes the waits longer, never shorter.
     */
    @Test
    void wrongProofsFromOneAddressAreAnsweredLaterAndLater() throws IOException
    {
        final JobKey guess = JobKey.of("a guessed token!!");
        final StoreLimits limits = new StoreLimits(4, 8, 8, 4096, 5_000, 5_000, GuessPacer.MAX_DELAY_MILLIS);
        try (StoreServer server = start(KEY, limits))
        {
            final long[] millis = new long[GuessPacer.FREE_GUESSES + 3];
            for (int i = 0; i < millis.length; i++)
            {
                final long start = System.nanoTime();
                final HcclException refused = assertThrows(HcclException.class,
                    () -> StoreClient.connect(at(server), 1, inSeconds(10), guess));
                millis[i] = (System.nanoTime() - start) / 1_000_000;
                assertTrue(refused.getMessage().contains("refused this rank's proof of the job token"),
                    refused.getMessage());
            }
            for (int i = GuessPacer.FREE_GUESSES; i < millis.length; i++)
            {
                final long due = (i + 1 - GuessPacer.FREE_GUESSES) * GuessPacer.DELAY_STEP_MILLIS;
                assertTrue(millis[i] >= due - 20, "guess " + (i + 1) + " answered after " + millis[i] + " ms, not " +
                    due + ": " + Arrays.toString(millis));
            }
            // The job's own ranks are not slowed.
            try (StoreClient rank = StoreClient.connect(at(server), 0, inSeconds(5), KEY))
            {
                rank.set("k", "v");
            }
        }
    }

    @Test
    void storedBytesAreBounded() throws IOException
    {
        try (StoreServer server = start(KEY, LIMITS))
        {
            try (StoreClient client = StoreClient.connect(at(server), 0, inSeconds(5), KEY))
            {
                client.set("small", new byte[1000]);
                final HcclException ex = assertThrows(HcclException.class, () -> client.set("big", new byte[4000]));
                assertTrue(ex.getMessage().contains("rendezvous store is full"), ex.getMessage());
                // Refused, not disconnected: what fits still goes in.
                client.set("next", "fits");
            }
            try (StoreClient again = StoreClient.connect(at(server), 1, inSeconds(5), KEY))
            {
                assertArrayEquals(new byte[1000], again.get("small", inSeconds(5)));
                assertEquals(null, again.get("big", System.nanoTime()));
                assertEquals("fits", again.getString("next", inSeconds(5)));
            }
        }
    }

    /** A loopback master keeps the store on loopback; an address of another host cannot be bound, so all are. */
    @Test
    void theStoreListensWhereTheMasterAddressSays()
    {
        final InetSocketAddress loopback = StoreServer.bindAddress(new InetSocketAddress("127.0.0.1", 29500));
        assertTrue(loopback.getAddress().isLoopbackAddress(), loopback.toString());
        assertEquals(29500, loopback.getPort());
        assertTrue(StoreServer.bindAddress(new InetSocketAddress("localhost", 1)).getAddress().isLoopbackAddress());
        // 192.0.2.1 is TEST-NET-1, never an address of this host.
        final InetSocketAddress elsewhere = StoreServer.bindAddress(new InetSocketAddress("192.0.2.1", 29500));
        assertTrue(elsewhere.getAddress().isAnyLocalAddress(), elsewhere.toString());
    }

    /**
     * A client's hello, up to the store's nonce, which is returned; the store then says nothing before the proof.
     */
    static byte[] hello(final Socket socket, final byte[] clientNonce, final DataInputStream in)
        throws IOException
    {
        final DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        out.writeInt(StoreProtocol.MAGIC);
        out.writeByte(StoreProtocol.VERSION);
        out.write(clientNonce);
        out.flush();
        // The store sends its mode and nonce only: the client proves first, so a stranger gets no proof to guess against.
        assertEquals(StoreProtocol.MODE_CLEAR, in.readByte());
        final byte[] serverNonce = new byte[JobKey.NONCE_BYTES];
        in.readFully(serverNonce);
        socket.setSoTimeout(200);
        assertThrows(java.net.SocketTimeoutException.class, in::readByte, "nothing more before the client's proof");
        socket.setSoTimeout(5_000);
        return serverNonce;
    }

    private static void assertClosed(final DataInputStream in) throws IOException
    {
        try
        {
            assertEquals(-1, in.read(), "the store closed the connection");
        }
        catch (final SocketException ex)
        {
            // reset by the store: closed as well
        }
    }

    private static void sleep(final long millis)
    {
        try
        {
            Thread.sleep(millis);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
