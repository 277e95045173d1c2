package dev.hccl.core.bootstrap;

import dev.hccl.api.spi.JobKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The store's door tells a client that proved the key OK only while the challenge is within its deadline: once the
 * deadline has claimed the connection, the client hears nothing more (and tries again), never OK on a connection
 * about to close, which it would take for a lost store.
 */
@Timeout(30)
class StoreGateTest
{
    private static final JobKey KEY = JobKey.of("token");

    @Test
    void aClientThatProvesTheKeyInTimeIsToldOk() throws Exception
    {
        assertEquals(StoreProtocol.OK, challenge(true));
    }

    @Test
    void aClientWhoseChallengeOutlivedTheDeadlineIsNotToldOk() throws Exception
    {
        assertEquals(-1, challenge(false), "the client must hear nothing after its proof");
    }

    /** Runs one client's challenge against the gate; the status byte the client read, or -1 at the end of stream. */
    private static int challenge(final boolean inTime) throws Exception
    {
        final StoreGate gate = new StoreGate(KEY, null, new RefusalLog(), (code, rank, reason) -> { },
            new GuessPacer(0));
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
            Socket client = new Socket(InetAddress.getLoopbackAddress(), listener.getLocalPort());
            Socket accepted = listener.accept())
        {
            final CompletableFuture<StoreGate.Admitted> admitted = CompletableFuture.supplyAsync(() ->
            {
                try
                {
                    final StoreGate.Admitted a = gate.admit(accepted, () -> inTime ? StoreGate.Seat.TAKEN : StoreGate.Seat.LATE);
                    if (a == null)
                    {
                        accepted.close(); // as the store does with a client it turned away
                    }
                    return a;
                }
                catch (final java.io.IOException ex)
                {
                    throw new java.io.UncheckedIOException(ex);
                }
            });
            final DataOutputStream out = new DataOutputStream(client.getOutputStream());
            final DataInputStream in = new DataInputStream(client.getInputStream());
            final byte[] clientNonce = JobKey.nonce();
            final byte[] serverNonce = StoreSecurityTest.hello(client, clientNonce, in);
            out.write(KEY.prove(StoreProtocol.CLIENT_ROLE, serverNonce, clientNonce));
            out.flush();
            final int status = in.read();
            final StoreGate.Admitted a = admitted.get(10, TimeUnit.SECONDS);
            if (inTime)
            {
                assertNotNull(a);
            }
            else
            {
                assertNull(a);
            }
            return status;
        }
    }
}
