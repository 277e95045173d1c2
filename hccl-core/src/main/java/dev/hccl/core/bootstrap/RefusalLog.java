package dev.hccl.core.bootstrap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.Socket;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the rendezvous store says about the clients it turns away: a WARN at most once a second, since a flood of
 * strangers must not flood the log, and the last client that looked like a rank and was turned away (a TLS handshake,
 * a proof of another job token), which the message of the ranks that did not arrive names: the rank behind it cannot
 * join. Thread-safe.
 */
final class RefusalLog
{
    private static final Logger LOG = LoggerFactory.getLogger(StoreServer.class);
    /** At most one WARN a second about clients turned away. */
    private static final long INTERVAL_NANOS = 1_000_000_000L;

    private final AtomicLong lastWarning = new AtomicLong(System.nanoTime() - INTERVAL_NANOS);
    private volatile String lastRankLike;

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
     * A client turned away that may be a rank of the job (over TLS, or proving another job token): remembered, and
     * warned about.
     *
     * @param client the client.
     * @param why    in words.
     */
    void rankLike(final Socket client, final String why)
    {
        final String said = client.getRemoteSocketAddress() + ": " + why;
        lastRankLike = said;
        warn("rendezvous store: turned away {}", said);
    }

    /**
     * The last client turned away that may be a rank of the job.
     *
     * @return the client's address and why, or null.
     */
    String lastRankLike()
    {
        return lastRankLike;
    }
}
