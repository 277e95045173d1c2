package dev.hccl.core.bootstrap;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A connection in the store's challenge: it has not proven the job key yet. It ends exactly once, either in time (the
 * client proved the key and is told so) or cut (its deadline passed, or the store closed it to make room for a newer
 * one): a client told OK must never then find its connection closed, or it would take the store for lost.
 */
final class Challenge
{
    private final Socket socket;
    private final long startNanos = System.nanoTime();
    private final AtomicBoolean open = new AtomicBoolean(true);

    Challenge(final Socket socket)
    {
        this.socket = socket;
    }

    Socket socket()
    {
        return socket;
    }

    InetAddress address()
    {
        return socket.getInetAddress();
    }

    /**
     * How long the connection has been in the challenge.
     *
     * @param nowNanos {@link System#nanoTime()}.
     * @return milliseconds.
     */
    long ageMillis(final long nowNanos)
    {
        return (nowNanos - startNanos) / 1_000_000L;
    }

    /**
     * Ends the challenge in time: the client proved the key.
     *
     * @return false when it was cut first (the connection is closed).
     */
    boolean end()
    {
        return open.compareAndSet(true, false);
    }

    /**
     * Cuts the challenge short and closes the connection, unless it ended in time first.
     *
     * @return whether this cut it.
     */
    boolean cut()
    {
        if (!open.compareAndSet(true, false))
        {
            return false;
        }
        try
        {
            socket.close();
        }
        catch (final IOException ignore)
        {
            // closing anyway
        }
        return true;
    }
}
