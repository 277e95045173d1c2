package dev.hccl.spark;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import org.apache.spark.TaskContext;
import org.apache.spark.util.TaskCompletionListener;
import org.apache.spark.util.TaskFailureListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Binds a communicator's life to its Spark task: aborted when the task fails or is killed, closed when it ends.
 * <p>
 * Spark kills the other tasks of a failed barrier stage without interrupting their threads, so a task blocked in a
 * collective would not notice: one daemon thread per JVM looks at every bound task's kill flag
 * ({@link TaskContext#isInterrupted()}) every {@link #POLL_MILLIS} ms and aborts the communicator of a killed one,
 * which ends the waits of every rank. The set-up runs on a thread of its own, so that the task can give up on it
 * when killed: the rendezvous waits on sockets, which an interrupt does not end.
 */
final class TaskBinding
{
    /** How often the kill flags are read; also how long a killed task waits at most before its ranks hear of it. */
    static final long POLL_MILLIS = 50;

    private static final Logger LOG = LoggerFactory.getLogger(TaskBinding.class);
    private static final Set<TaskBinding> BOUND = ConcurrentHashMap.newKeySet();
    private static final ScheduledExecutorService WATCH = Executors.newSingleThreadScheduledExecutor(r ->
    {
        final Thread t = new Thread(r, "hccl-spark-task-watch");
        t.setDaemon(true);
        return t;
    });

    static
    {
        WATCH.scheduleWithFixedDelay(TaskBinding::abortKilled, POLL_MILLIS, POLL_MILLIS, TimeUnit.MILLISECONDS);
    }

    private final TaskContext task;
    private final Communicator comm;
    private final AtomicBoolean aborted = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();

    private TaskBinding(final TaskContext task, final Communicator comm)
    {
        this.task = task;
        this.comm = comm;
    }

    /**
     * Sets up the communicator of {@code config} for {@code task}, and binds it to the task.
     *
     * @param task   the task.
     * @param config the configuration, placed.
     * @return the communicator.
     * @throws org.apache.spark.TaskKilledException when the task is killed while the ranks set up.
     */
    static Communicator init(final TaskContext task, final CommConfig config)
    {
        final CompletableFuture<Communicator> made = new CompletableFuture<>();
        final Thread setUp = new Thread(() ->
        {
            try
            {
                final Communicator c = Hccl.init(config);
                if (!made.complete(c))
                {
                    // The task gave up waiting (it was killed): nobody else will close it.
                    c.abort();
                    c.close();
                }
            }
            catch (final Throwable t)
            {
                made.completeExceptionally(t);
            }
        }, "hccl-spark-init-r" + config.rank());
        setUp.setDaemon(true);
        setUp.start();
        while (true)
        {
            try
            {
                return bind(task, made.get(POLL_MILLIS, TimeUnit.MILLISECONDS));
            }
            catch (final TimeoutException ex)
            {
                if (task.isInterrupted() && made.cancel(false))
                {
                    task.killTaskIfInterrupted();
                }
            }
            catch (final InterruptedException ex)
            {
                if (made.cancel(false))
                {
                    Thread.currentThread().interrupt();
                    task.killTaskIfInterrupted();
                    throw new HcclException(ErrorCode.E_UNAVAIL, config.rank(), HcclException.UNKNOWN_RANK,
                        Operation.INIT, HcclException.NO_SEQUENCE, "interrupted while the ranks set up", ex);
                }
                Thread.currentThread().interrupt();
            }
            catch (final ExecutionException ex)
            {
                throw BarrierFunction.Adapter.<RuntimeException>rethrow(inSpark(ex.getCause()));
            }
        }
    }

    /**
     * An error about the JVM's set-up says where Spark takes JVM flags from: an executor's own command line is
     * Spark's to write.
     *
     * @param failure why the set-up failed.
     * @return an {@code E_ENV} error that names Spark's settings, with {@code failure} as its cause; else
     * {@code failure}.
     */
    static Throwable inSpark(final Throwable failure)
    {
        if (failure instanceof HcclException && ErrorCode.E_ENV == ((HcclException)failure).errorCode())
        {
            return new HcclException(ErrorCode.E_ENV, failure.getMessage() + ". Under Spark, give the flags to the " +
                "executors in spark.executor.extraJavaOptions, and in local mode, where tasks run in the driver's " +
                "JVM, to the driver in spark.driver.extraJavaOptions (spark-submit --driver-java-options)", failure);
        }
        return failure;
    }

    private static Communicator bind(final TaskContext task, final Communicator comm)
    {
        final TaskBinding binding = new TaskBinding(task, comm);
        BOUND.add(binding);
        task.addTaskFailureListener((TaskFailureListener)(context, error) -> binding.abortOnce());
        task.addTaskCompletionListener((TaskCompletionListener)context ->
            binding.end(context.isFailed() || context.isInterrupted()));
        if (task.isInterrupted())
        {
            binding.end(true);
            task.killTaskIfInterrupted();
        }
        return comm;
    }

    /**
     * Aborts the communicators of the tasks that Spark killed; runs on the watch thread, which must never die of an
     * exception (a scheduled task that throws is never run again).
     */
    private static void abortKilled()
    {
        for (final TaskBinding b : BOUND)
        {
            try
            {
                if (b.task.isInterrupted())
                {
                    BOUND.remove(b);
                    b.abortOnce();
                }
            }
            catch (final RuntimeException ex)
            {
                LOG.warn("aborting the communicator of a killed task failed", ex);
            }
        }
    }

    /** Aborts the communicator, which ends the other ranks' waits too. */
    private void abortOnce()
    {
        if (aborted.compareAndSet(false, true))
        {
            comm.abort();
        }
    }

    /**
     * Ends the binding when the task ends: aborts the communicator when the task failed or was killed, then closes
     * it once (after the task's own close, closing again does nothing).
     *
     * @param failed whether the task failed or was killed.
     */
    private void end(final boolean failed)
    {
        BOUND.remove(this);
        if (failed)
        {
            abortOnce();
        }
        if (closed.compareAndSet(false, true))
        {
            try
            {
                comm.close();
            }
            catch (final HcclException ex)
            {
                if (!aborted.get())
                {
                    throw ex; // the task ended well, but its collectives did not agree: say so
                }
                // Aborted here, so close reports that abort: the task's own failure or kill is what Spark reports.
                LOG.debug("closing the aborted communicator of a failed task", ex);
            }
        }
    }
}
