package dev.hccl.core;

import dev.hccl.core.mailbox.Position;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * What watches every communicator of the process from one daemon thread: Horovod's stall check (every
 * {@code HCCL_STALL_CHECK_TIME} a communicator whose rank has waited that long in one operation says so at WARN, with
 * what it waits for, from whom, and where its peers are, a {@link PositionSurvey}, long before
 * {@code HCCL_EXEC_TIMEOUT} fails the operation), and, with {@code HCCL_DUMP_DIR}, the file that asks for a flight
 * recorder dump (its modification time, each second).
 */
final class Watchdog
{
    private static final Logger LOG = LoggerFactory.getLogger(Watchdog.class);
    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(task ->
    {
        final Thread t = new Thread(task, "hccl-watchdog");
        t.setDaemon(true);
        return t;
    });

    /** A communicator's watch, cancelled when it closes. */
    interface Registration
    {
        void cancel();
    }

    private Watchdog()
    {
    }

    /**
     * Watches a communicator.
     *
     * @param comm   the communicator.
     * @param period how often to look, and how long a wait must have lasted to be reported.
     * @return what cancels it.
     */
    static Registration watch(final CommunicatorImpl comm, final Duration period)
    {
        final long millis = Math.max(1, period.toMillis());
        final ScheduledFuture<?> stalls = TIMER.scheduleAtFixedRate(() -> check(comm, millis), millis, millis,
            TimeUnit.MILLISECONDS);
        final String dir = comm.config().dumpDir();
        if (dir == null)
        {
            return () -> stalls.cancel(false);
        }
        final Path trigger = Path.of(dir, FlightRecorder.TRIGGER_FILE);
        final long[] seen = {modified(trigger)}; // a file older than the communicator asks nothing of it
        final ScheduledFuture<?> dumps = TIMER.scheduleWithFixedDelay(() ->
        {
            final long m = modified(trigger);
            if (m > seen[0])
            {
                seen[0] = m;
                try
                {
                    comm.recorder().dump(comm, comm.dumpDir(), "on demand (" + trigger + " touched)");
                }
                catch (final RuntimeException ex)
                {
                    LOG.warn("rank {}: could not write the flight recorder: {}", comm.rank(), ex.toString());
                }
            }
        }, 1, 1, TimeUnit.SECONDS);
        return () ->
        {
            stalls.cancel(false);
            dumps.cancel(false);
        };
    }

    private static long modified(final Path file)
    {
        try
        {
            return Files.getLastModifiedTime(file).toMillis();
        }
        catch (final IOException ex)
        {
            return 0;
        }
    }

    private static void check(final CommunicatorImpl comm, final long periodMillis)
    {
        try
        {
            final Position mine = comm.whereabouts().now();
            final String awaited = comm.whereabouts().awaited();
            if (mine.idle() || mine.waitingFor() < 0 || mine.waitedMillis() < periodMillis || awaited == null ||
                comm.failure() != null)
            {
                return;
            }
            final PositionSurvey.Finding finding = PositionSurvey.run(comm, mine, false);
            LOG.warn("rank {}: {} #{} has waited {} s for rank {} ({}); {} HCCL_EXEC_TIMEOUT fails it after {} s",
                comm.rank(), mine.desc(), mine.seq(), String.format("%.1f", mine.waitedMillis() / 1e3),
                mine.waitingFor(), awaited, finding.account(), comm.execTimeoutNanos() / 1_000_000_000);
        }
        catch (final RuntimeException ex)
        {
            LOG.debug("stall check of rank {} failed", comm.rank(), ex);
        }
    }
}
