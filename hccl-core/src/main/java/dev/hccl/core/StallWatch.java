package dev.hccl.core;

import dev.hccl.core.mailbox.Position;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Horovod's stall check: every {@code HCCL_STALL_CHECK_TIME} each communicator whose rank has waited that long in one
 * operation says so at WARN, with what it waits for, from whom, and where its peers are (a {@link PositionSurvey}),
 * long before {@code HCCL_EXEC_TIMEOUT} fails the operation. One daemon thread per process, for every communicator.
 */
final class StallWatch
{
    private static final Logger LOG = LoggerFactory.getLogger(StallWatch.class);
    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(task ->
    {
        final Thread t = new Thread(task, "hccl-stall-watch");
        t.setDaemon(true);
        return t;
    });

    /** A communicator's watch, cancelled when it closes. */
    interface Registration
    {
        void cancel();
    }

    private StallWatch()
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
        final ScheduledFuture<?> task = TIMER.scheduleAtFixedRate(() -> check(comm, millis), millis, millis,
            TimeUnit.MILLISECONDS);
        return () -> task.cancel(false);
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
