package dev.hccl.transport.shm;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.LibraryThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The transport's own thread ({@code hccl-shm-<rank>-watch}, daemon): liveness, and the engine's driver while no
 * caller drives.
 * <p>
 * A shared segment has no socket that closes when a process dies, so every {@link #BEAT_INTERVAL_NANOS} the watch
 * writes this rank's heartbeat (wall-clock milliseconds, comparable across processes) into the trailer of each ring
 * it reads, and looks at each peer: the peer is dead when its process, seen at connect with the start time it
 * published, is gone (noticed within an interval), or when its heartbeat is older than the timeout (the only sign
 * where its pid is not visible here, from another pid namespace, and of a peer that hangs). The engine then fails the
 * link once it has read what the peer wrote before (so that a GOODBYE just before an exit counts as one), and reports
 * it. A trailer holding values that neither rank can have written ({@link ShmTrailer}: a heartbeat from the future,
 * a head past the tail) and a file truncated under the mapping (told from its size before each beat, as an access
 * would fault) are no sign of the peer's death: they fail the link at once with {@link ErrorCode#E_SHM_SEGMENT}
 * ({@link ShmDamage}).
 * <p>
 * Between beats, while no caller has driven the engine for {@link ShmProgress#IDLE_TAKEOVER_NANOS}, the watch polls
 * it, one poll at a time, so that an ABORT, a GOODBYE, a failure or a message between operations is read.
 */
final class ShmWatch
{
    /** How often heartbeats are written and checked. */
    static final long BEAT_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** The pause between looks at an idle engine. */
    static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private static final Logger LOG = LoggerFactory.getLogger(ShmWatch.class);

    private final int rank;
    private final ShmPeer[] peers;
    private final ShmProgress progress;
    private final long heartbeatTimeoutMillis;
    private final Thread thread;
    private volatile boolean running = true;

    /**
     * A watch, not started.
     *
     * @param rank                   this rank.
     * @param peers                  the connected peers.
     * @param progress               the engine to drive while idle.
     * @param heartbeatTimeoutMillis how old a peer's heartbeat may grow before the peer counts as dead.
     */
    ShmWatch(final int rank, final ShmPeer[] peers, final ShmProgress progress, final long heartbeatTimeoutMillis)
    {
        this.rank = rank;
        this.peers = peers;
        this.progress = progress;
        this.heartbeatTimeoutMillis = heartbeatTimeoutMillis;
        this.thread = LibraryThreads.newThread(this::run, "hccl-shm-" + rank + "-watch");
    }

    /**
     * Writes this rank's heartbeat into every ring it reads; also while connecting, before the watch starts.
     *
     * @param peers the peers.
     */
    static void beat(final ShmPeer[] peers)
    {
        final long now = System.currentTimeMillis();
        for (final ShmPeer p : peers)
        {
            if (p.link.isOpen())
            {
                // The size first: a write into a truncated file faults.
                final HcclException truncated = ShmDamage.truncated(
                    p.rank, p.peer, p.segment, "writing this rank's heartbeat for rank " + p.peer, null);
                if (null != truncated)
                {
                    damaged(p, truncated);
                    continue;
                }
                p.inbound.consumerHeartbeatTime(now);
            }
        }
    }

    /** Fails the link of a damaged segment at once: the peer may well be alive, but the memory is not to be trusted. */
    private static void damaged(final ShmPeer p, final HcclException damage)
    {
        if (p.link.fail(damage))
        {
            LOG.warn("rank {}: {}", p.rank, damage.detail());
        }
    }

    void start()
    {
        progress.idleDriver(thread);
        thread.start();
    }

    /**
     * Stops the thread and waits for it to end, unless called on it.
     *
     * @param timeoutMillis how long to wait.
     * @return true when the thread has ended, so that it touches the memory no more.
     */
    boolean stop(final long timeoutMillis)
    {
        running = false;
        LockSupport.unpark(thread);
        if (Thread.currentThread() == thread)
        {
            return false;
        }
        try
        {
            thread.join(timeoutMillis);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }

    private void run()
    {
        long nextBeat = System.nanoTime();
        while (running)
        {
            try
            {
                final long now = System.nanoTime();
                if (now - nextBeat >= 0)
                {
                    beat(peers);
                    check();
                    nextBeat = now + BEAT_INTERVAL_NANOS;
                }
                if (0 == driveIfIdle())
                {
                    LockSupport.parkNanos(this, Math.min(IDLE_PARK_NANOS, Math.max(0, nextBeat - now)));
                }
            }
            catch (final Throwable t)
            {
                LOG.error("rank {}: the shared-memory watch failed; it goes on", rank, t);
                LockSupport.parkNanos(this, IDLE_PARK_NANOS);
            }
        }
    }

    /** Looks at every open peer once; fails the link of a dead one, or of a damaged segment. */
    private void check()
    {
        final long now = System.currentTimeMillis();
        for (final ShmPeer p : peers)
        {
            if (!p.link.isOpen() || null != p.link.deathNotice())
            {
                continue;
            }
            check(p, now);
        }
    }

    private void check(final ShmPeer p, final long now)
    {
        if (null != p.process && !p.process.isAlive())
        {
            noticeDeath(p, "rank " + p.peer + " (pid " + p.pid + ") died");
            return;
        }
        // The ring this rank writes holds the peer's heartbeat; the one it reads holds this rank's own.
        final String outbound = ShmTrailer.problem(p.outbound, now, Math.max(0, p.startMillis));
        final String inbound = null != outbound ? null : ShmTrailer.problem(p.inbound, now, -1);
        if (null != outbound)
        {
            damaged(p, ShmDamage.corrupted(rank, p.peer, p.segment, rank, outbound));
            return;
        }
        if (null != inbound)
        {
            damaged(p, ShmDamage.corrupted(rank, p.peer, p.segment, p.peer, inbound));
            return;
        }
        final long age = now - p.outbound.consumerHeartbeatTime();
        if (age > heartbeatTimeoutMillis)
        {
            noticeDeath(p, "rank " + p.peer + " (pid " + p.pid + ") stopped: its heartbeat in shared memory is " +
                age + " ms old (HCCL_HEARTBEAT_TIMEOUT is " + heartbeatTimeoutMillis +
                " ms): its process is frozen (stopped, in a debugger, swapping)");
        }
    }

    private void noticeDeath(final ShmPeer p, final String why)
    {
        p.link.noticeDeath(
            new HcclException(ErrorCode.E_REMOTE, rank, p.peer, null, HcclException.NO_SEQUENCE, why, null));
    }

    /** Polls the engine once when no caller drives it. */
    private int driveIfIdle()
    {
        if (!progress.enterIfIdle())
        {
            return 0;
        }
        try
        {
            return progress.poll(0);
        }
        finally
        {
            progress.exit();
        }
    }
}
