package dev.hccl.core.watch;

import dev.hccl.api.spi.LibraryThreads;
import dev.hccl.core.mailbox.Position;
import dev.hccl.core.op.OpScope;
import dev.hccl.core.op.PositionSurvey;
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
import java.util.function.Consumer;

/**
 * What watches every communicator of the process from one daemon thread: Horovod's stall check (a communicator whose
 * rank has waited {@code HCCL_STALL_CHECK_TIME} in one operation says so at WARN, and again each further period, with
 * what it waits for, from whom, and where its peers are, a {@link PositionSurvey}, long before
 * {@code HCCL_EXEC_TIMEOUT} fails the operation; {@link StallSchedule} times the looks), and, with
 * {@code HCCL_DUMP_DIR}, the file that asks for a flight recorder dump (its modification time, each second).
 */
public final class Watchdog
{
    private static final Logger LOG = LoggerFactory.getLogger(Watchdog.class);
    private static final ScheduledExecutorService TIMER =
        Executors.newSingleThreadScheduledExecutor(task -> LibraryThreads.newThread(task, "hccl-watchdog"));

    /** A communicator's watch, cancelled when it closes. */
    public interface Registration
    {
        /** Stops watching. */
        void cancel();
    }

    private Watchdog()
    {
    }

    /**
     * Watches a communicator.
     *
     * @param comm    the communicator's waits, failure state and survey.
     * @param period  how often to look, and how long a wait must have lasted to be reported.
     * @param dir     {@code HCCL_DUMP_DIR}, where a touched trigger file asks for a dump; null for none.
     * @param dump    writes the flight recorder's dump, for the reason given.
     * @param stalled told of each stall reported (the counters count it).
     * @return what cancels it.
     */
    public static Registration watch(
        final OpScope comm, final Duration period, final String dir, final Consumer<String> dump,
        final Runnable stalled)
    {
        final StallCheck stalls = new StallCheck(comm, Math.max(1, period.toMillis()), stalled);
        stalls.schedule(stalls.periodMillis);
        if (dir == null)
        {
            return stalls::cancel;
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
                    dump.accept("on demand (" + trigger + " touched)");
                }
                catch (final RuntimeException ex)
                {
                    LOG.warn("rank {}: could not write the flight recorder: {}", comm.rank(), ex.toString());
                }
            }
        }, 1, 1, TimeUnit.SECONDS);
        return () ->
        {
            stalls.cancel();
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

    /** One communicator's stall check: each look schedules the next, when {@link StallSchedule} says. */
    private static final class StallCheck implements Runnable
    {
        private final OpScope comm;
        private final long periodMillis;
        private final Runnable stalled;
        private volatile boolean cancelled;
        private volatile ScheduledFuture<?> next;

        StallCheck(final OpScope comm, final long periodMillis, final Runnable stalled)
        {
            this.comm = comm;
            this.periodMillis = periodMillis;
            this.stalled = stalled;
        }

        void schedule(final long delayMillis)
        {
            if (!cancelled)
            {
                next = TIMER.schedule(this, delayMillis, TimeUnit.MILLISECONDS);
                if (cancelled)
                {
                    next.cancel(false);
                }
            }
        }

        void cancel()
        {
            cancelled = true;
            final ScheduledFuture<?> f = next;
            if (f != null)
            {
                f.cancel(false);
            }
        }

        @Override
        public void run()
        {
            if (cancelled)
            {
                return;
            }
            long waited = -1;
            try
            {
                check(comm, periodMillis, stalled);
                // Read after the check, whose survey of the peers takes a while.
                waited = comm.whereabouts().now().waitedMillis();
            }
            catch (final RuntimeException ex)
            {
                LOG.debug("stall check of rank {} failed", comm.rank(), ex);
            }
            schedule(StallSchedule.nextDelayMillis(waited, periodMillis));
        }
    }

    private static void check(final OpScope comm, final long periodMillis, final Runnable stalled)
    {
        try
        {
            final Position mine = comm.whereabouts().now();
            final String awaited = comm.whereabouts().awaited();
            if (mine.idle() || mine.waitingFor() < 0 || mine.waitedMillis() < periodMillis || awaited == null ||
                comm.failures().get() != null)
            {
                return;
            }
            final PositionSurvey.Finding finding = comm.survey().run(mine, false);
            stalled.run();
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
