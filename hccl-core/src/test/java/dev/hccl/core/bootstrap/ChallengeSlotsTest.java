package dev.hccl.core.bootstrap;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which connection in the challenge makes room for a new one: a flood from one address closes only its own, and the
 * bound in all falls on the address that holds the most. Real connections from two loopback addresses.
 */
@Timeout(30)
class ChallengeSlotsTest
{
    private static final InetAddress HOST_A = InetAddress.getLoopbackAddress();
    private final List<Socket> sockets = new ArrayList<>();
    private ServerSocket server;

    @AfterEach
    void close() throws IOException
    {
        for (final Socket s : sockets)
        {
            s.close();
        }
        if (server != null)
        {
            server.close();
        }
    }

    @Test
    void aNewConnectionClosesTheOldestOfItsAddressWhenThatHoldsItsShare() throws IOException
    {
        final ChallengeSlots slots = new ChallengeSlots();
        final Challenge a1 = accepted(HOST_A);
        final Challenge b1 = accepted(hostB());
        final Challenge a2 = accepted(HOST_A);
        assertNull(slots.enter(a1, 10, 2));
        assertNull(slots.enter(b1, 10, 2));
        assertNull(slots.enter(a2, 10, 2));
        final Challenge a3 = accepted(HOST_A);
        assertSame(a1, slots.enter(a3, 10, 2), "A's oldest makes room, not B's older one");
        assertSame(a2, slots.enter(accepted(HOST_A), 10, 2));
        assertEquals(3, slots.size());
        assertTrue(slots.cutSoFar().startsWith("2 connections that had not proven the job token (the last from "),
            slots.cutSoFar());
    }

    @Test
    void theBoundInAllFallsOnTheAddressThatHoldsTheMost() throws IOException
    {
        final ChallengeSlots slots = new ChallengeSlots();
        final Challenge b1 = accepted(hostB());
        final Challenge a1 = accepted(HOST_A);
        final Challenge a2 = accepted(HOST_A);
        assertNull(slots.enter(b1, 3, 3));
        assertNull(slots.enter(a1, 3, 3));
        assertNull(slots.enter(a2, 3, 3));
        assertSame(a1, slots.enter(accepted(hostB()), 3, 3), "A holds the most: its oldest, not B's older one");
        slots.leave(b1);
        slots.leave(b1);
        assertEquals(2, slots.size(), "leaving is idempotent");
        assertNull(slots.enter(accepted(HOST_A), 3, 3));
        assertTrue(slots.cutSoFar().startsWith("1 connection that had not proven"), slots.cutSoFar());
    }

    /** 127.0.0.2, another address of loopback on Linux. */
    private static InetAddress hostB() throws IOException
    {
        return InetAddress.getByAddress(new byte[]{ 127, 0, 0, 2 });
    }

    /** A connection from {@code from}, as the store accepts it. */
    private Challenge accepted(final InetAddress from) throws IOException
    {
        if (server == null)
        {
            server = new ServerSocket(0, 50, HOST_A);
        }
        final Socket client = new Socket();
        client.bind(new InetSocketAddress(from, 0));
        client.connect(new InetSocketAddress(HOST_A, server.getLocalPort()));
        sockets.add(client);
        final Socket accepted = server.accept();
        sockets.add(accepted);
        assertEquals(from, accepted.getInetAddress());
        return new Challenge(accepted);
    }
}
