package dev.hccl.tools.launch;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One launch: starts the ranks, forwards their output, and stops them all when one fails or
 * when the launcher itself is terminated. With restarts ({@link LaunchPlan#maxRestarts}), once the failed start's
 * ranks and everything they started are gone, it starts them all again, as torchrun's agent does: the ranks of the
 * job's other nodes fail with the job and their launchers restart too, so that every rank meets the others in a fresh
 * rendezvous. {@code HCCL_RESTART_COUNT} tells a rank which start it is (0 the first), so that it resumes from its
 * checkpoint.
 */
final class LocalJob
{
    /** Exit status when a rank cannot be started at all, as a shell reports a missing command. */
    static final int START_FAILED = 127;

    /** Exit status when the launcher is interrupted (in-process use), as after SIGINT. */
    static final int INTERRUPTED = 130;

    /**
     * How long to wait for the ranks' pipes to reach end-of-file after the ranks are gone. Only a
     * background process of a rank that still holds the pipe open makes this wait at all.
     */
    static final long DRAIN_MILLIS = 2_000;

    /**
     * How long to wait for a failed rank's pipes before reporting it, so that its last words
     * (usually the reason) come before the launcher's message rather than after it.
     */
    static final long FAILED_RANK_DRAIN_MILLIS = 500;

    /** How long to wait for SIGKILLed processes to disappear; SIGKILL cannot be ignored. */
    static final long KILL_WAIT_MILLIS = 1_000;

    /** The variable that tells a rank how many times its node's ranks were started before (torchrun's is
     * TORCHELASTIC_RESTART_COUNT). */
    static final String RESTART_COUNT = "HCCL_RESTART_COUNT";
    /** The variable that gives a rank's library threads their CPUs (hcclrun --library-cores). */
    static final String LIBRARY_CPUS = "HCCL_LIBRARY_CPUS";
    /** The variable that names the file holding the job's token, which rank 0's INFO line names for hccl-status. */
    static final String TOKEN_FILE = "HCCL_JOB_TOKEN_FILE";

    private final LaunchPlan plan;
    private final PrintStream out;
    private final PrintStream err;
    private final String token;
    private final Path tokenFile;

    // Guards starting a rank against the shutdown hook, so no rank can be started unseen by it.
    private final Object startLock = new Object();
    private final List<Process> processes = new CopyOnWriteArrayList<>();
    private final List<List<Thread>> pumps = new CopyOnWriteArrayList<>();  // index: rank
    /** Each rank's stdout and stderr when --local-ranks-filter hides them, else empty; index: rank. */
    private final List<List<HiddenOutput>> hidden = new CopyOnWriteArrayList<>();
    /** The processes of the current start; a restart begins a fresh record. */
    private volatile ProcessTrees trees = new ProcessTrees();
    private volatile boolean launcherStopping;

    /**
     * @param plan  what to start
     * @param out   receives the ranks' stdout
     * @param err   receives the ranks' stderr and the launcher's messages
     * @param token the job token, given to every rank
     * @param tokenFile a file only the user can read that holds the token, given to every rank as
     *                  {@value #TOKEN_FILE}; null for none (the user knows the token: it came from the environment)
     */
    LocalJob(LaunchPlan plan, PrintStream out, PrintStream err, String token, Path tokenFile)
    {
        this.plan = plan;
        this.out = out;
        this.err = err;
        this.token = token;
        this.tokenFile = tokenFile;
    }

    /**
     * Runs the job to the end.
     *
     * @return 0 when every rank exited 0, else the status of the first rank that did not
     */
    int run()
    {
        Thread hook = new Thread(this::onLauncherShutdown, "hcclrun-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try
        {
            int status = startAndWait(0);
            for (int restart = 1; status != 0 && restart <= plan.maxRestarts() && !launcherStopping; restart++)
            {
                message("hcclrun: restarting the ranks of this node (" + restart + " of " + plan.maxRestarts()
                        + " restarts)");
                processes.clear();
                pumps.clear();
                hidden.clear();
                trees = new ProcessTrees();
                status = startAndWait(restart);
            }
            if (status != 0 && plan.maxRestarts() > 0 && !launcherStopping)
            {
                message("hcclrun: the ranks of this node failed after every restart (" + plan.maxRestarts() + " of "
                        + plan.maxRestarts() + ", --max-restarts); giving up with status " + status);
            }
            return status;
        }
        catch (final InterruptedException e)
        {
            // Only reachable in-process (a test, an embedding tool): nobody is left to wait for
            // a grace period, so do not leave anything running.
            trees.record(handles());
            trees.kill();
            Thread.currentThread().interrupt();
            return INTERRUPTED;
        }
        finally
        {
            try
            {
                Runtime.getRuntime().removeShutdownHook(hook);
            }
            catch (final IllegalStateException shutdownInProgress)
            {
                // The hook is running or has run; it does the cleaning up.
            }
            flush();
        }
    }

    private int startAndWait(final int restart) throws InterruptedException
    {
        int port;
        try
        {
            port = plan.masterPort() != null ? plan.masterPort() : RankEnvironment.freePort(plan.masterAddr());
        }
        catch (final IOException e)
        {
            message("hcclrun: cannot find a free port for MASTER_PORT: " + e.getMessage());
            return 1;
        }
        BlockingQueue<Integer> exited = new LinkedBlockingQueue<>();

        int failedRank = -1;
        int failedStatus = 0;
        long killAt = Long.MAX_VALUE;
        for (int rank = 0; rank < plan.ranks(); rank++)
        {
            final int jobRank = plan.firstRank() + rank;
            ProcessBuilder pb = new ProcessBuilder(plan.commandOf(rank));
            RankEnvironment.apply(pb.environment(), jobRank, plan.worldSize(), plan.localRank(rank),
                    plan.localSize(rank), plan.masterAddr(), port, token);
            pb.environment().put(RESTART_COUNT, Integer.toString(restart));
            if (tokenFile != null)
            {
                pb.environment().put(TOKEN_FILE, tokenFile.toString());
            }
            else
            {
                // One the launcher inherited need not hold this job's token.
                pb.environment().remove(TOKEN_FILE);
            }
            if (!plan.libraryCpus().isEmpty())
            {
                pb.environment().put(LIBRARY_CPUS, plan.libraryCpus().get(rank));
            }
            pb.command(RankEnvironment.command(pb.command(), pb.environment()));
            // Like mpirun: rank 0 gets the launcher's stdin, the others end-of-file, so that
            // several ranks never compete for one terminal.
            if (rank == 0)
            {
                pb.redirectInput(ProcessBuilder.Redirect.INHERIT);
            }
            Process p;
            synchronized (startLock)
            {
                if (launcherStopping)
                {
                    break;
                }
                try
                {
                    p = pb.start();
                }
                catch (final IOException | RuntimeException e)
                {
                    message("hcclrun: cannot start rank " + jobRank + ": " + e.getMessage()
                            + (processes.isEmpty() ? "" : "; stopping the other ranks"));
                    failedRank = rank;
                    failedStatus = START_FAILED;
                    killAt = stop();
                    break;
                }
                processes.add(p);
            }
            if (rank != 0)
            {
                closeQuietly(p);
            }
            String prefix = plan.prefix() ? "[" + jobRank + "] " : "";
            final List<HiddenOutput> kept = plan.hidden().contains(rank)
                    ? List.of(new HiddenOutput("stdout"), new HiddenOutput("stderr")) : List.of();
            hidden.add(kept);
            pumps.add(List.of(
                    LinePump.start(p.getInputStream(), kept.isEmpty() ? out : new PrintStream(kept.get(0)), prefix,
                            "hcclrun-rank" + jobRank + "-stdout"),
                    LinePump.start(p.getErrorStream(), kept.isEmpty() ? err : new PrintStream(kept.get(1)), prefix,
                            "hcclrun-rank" + jobRank + "-stderr")));
            int r = rank;
            p.onExit().thenRun(() -> exited.add(r));
        }

        boolean killed = false;
        for (int pending = processes.size(); pending > 0; )
        {
            Integer rank = exited.poll(Math.max(0, killAt - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (rank == null)
            {
                if (!killed)
                {
                    // Grace period over: re-record, as a rank may have started more processes.
                    trees.record(handles());
                    trees.kill();
                    killed = true;
                }
                killAt = Long.MAX_VALUE;
                continue;
            }
            pending--;
            int status = processes.get(rank).exitValue();
            if (status != 0 && failedRank < 0 && !launcherStopping)
            {
                failedRank = rank;
                failedStatus = status;
                // What a hidden rank wrote after its replay would be lost, not just late: it gets the longer wait.
                drain(pumps.get(rank), System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(
                        hidden.get(rank).isEmpty() ? FAILED_RANK_DRAIN_MILLIS : DRAIN_MILLIS));
                for (final HiddenOutput stream : hidden.get(rank))
                {
                    // Its last words, which the filter hid, usually hold the reason.
                    stream.replay(err, "rank " + (plan.firstRank() + rank));
                }
                message("hcclrun: rank " + (plan.firstRank() + rank) + " exited with status " + status
                        + "; stopping the other ranks");
                killAt = stop();
            }
        }

        if (failedRank >= 0)
        {
            // The ranks are gone, but what they started may not be: an orphan that ignores
            // SIGTERM, or one whose parent died before it got its own signal handled.
            long deadline = killed ? System.nanoTime() : killAt;
            if (!trees.awaitGone(deadline))
            {
                trees.kill();
                trees.awaitGone(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(KILL_WAIT_MILLIS));
            }
        }
        drainAll(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DRAIN_MILLIS));
        return failedRank >= 0 ? failedStatus : 0;
    }

    /** Records the running ranks' trees, sends SIGTERM, and returns when to escalate. */
    private long stop()
    {
        synchronized (startLock)
        {
            trees.record(handles());
        }
        trees.terminate();
        return System.nanoTime() + plan.gracePeriod().toNanos();
    }

    /** The shutdown hook: the launcher got SIGINT or SIGTERM (or System.exit while running). */
    private void onLauncherShutdown()
    {
        try
        {
            synchronized (startLock)
            {
                launcherStopping = true;
            }
            long killAt = stop();
            if (!trees.awaitGone(killAt))
            {
                trees.record(handles());
                trees.kill();
                trees.awaitGone(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(KILL_WAIT_MILLIS));
            }
            drainAll(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DRAIN_MILLIS));
        }
        catch (final InterruptedException e)
        {
            trees.kill();
            Thread.currentThread().interrupt();
        }
        finally
        {
            flush();
        }
    }

    private List<ProcessHandle> handles()
    {
        List<ProcessHandle> hs = new ArrayList<>(processes.size());
        for (Process p : processes)
        {
            hs.add(p.toHandle());
        }
        return hs;
    }

    /** Waits for the pumps to forward everything the ranks wrote. */
    private void drainAll(long deadlineNanos) throws InterruptedException
    {
        for (List<Thread> rankPumps : pumps)
        {
            drain(rankPumps, deadlineNanos);
        }
    }

    private static void drain(List<Thread> threads, long deadlineNanos) throws InterruptedException
    {
        for (Thread t : threads)
        {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0)
            {
                return;
            }
            TimeUnit.NANOSECONDS.timedJoin(t, left);
        }
    }

    private void message(String line)
    {
        synchronized (err)
        {
            err.println(line);
            err.flush();
        }
    }

    private void flush()
    {
        synchronized (out)
        {
            out.flush();
        }
        synchronized (err)
        {
            err.flush();
        }
    }

    private static void closeQuietly(Process p)
    {
        try
        {
            p.getOutputStream().close();
        }
        catch (final IOException ignored)
        {
            // The rank may already be gone; end-of-file is what it would have seen anyway.
        }
    }
}
