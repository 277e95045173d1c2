package dev.hccl.core.bootstrap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.Socket;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the rendezvous store says about the clients it turns away: a WARN at most once a second, since a flood of
 * strangers must not flood the log, and the last TLS handshake turned away, which the message of the ranks that did
 * not arrive names (the rank behind it cannot join). Thread-safe.
 */
final class RefusalLog
{
    private static final Logger LOG = LoggerFactory.getLogger(StoreServer.class);
    /** At most one WARN a second about clients turned away. */
    private static final long INTERVAL_NANOS = 1_000_000_000L;

    private final AtomicLong lastWarning = new AtomicLong(System.nanoTime() - INTERVAL_NANOS);
    private volatile String lastTls;

    /**
     * A WARN, unless one was logged less than a second ago.
     *
     * @param format the SLF4J format.
     * @param args   its arguments.
     */
    void warn(final String format, final Object... args)
    {
        final long now = System.nanoTime();
        final long last = lastWarning.get();
        if (now - last >= INTERVAL_NANOS && lastWarning.compareAndSet(last, now))
        {
            LOG.warn(format, args);
        }
    }

    /**
     * A client turned away over TLS: remembered, and warned about.
     *
     * @param client the client.
     * @param why    in words.
     */
    void tls(final Socket client, final String why)
    {
        final String said = client.getRemoteSocketAddress() + ": " + why;
        lastTls = said;
        warn("rendezvous store: turned away {}", said);
    }

    /**
     * The last TLS handshake turned away.
     *
     * @return the client's address and why, or null.
     */
    String lastTls()
    {
        return lastTls;
    }
}
