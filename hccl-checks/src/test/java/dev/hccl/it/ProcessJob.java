package dev.hccl.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A job of separate JVMs on loopback, one per rank, started by hand with the launcher's variables: each process's
 * output (stdout and stderr) is collected line by line, so a test can wait for a line, then look at the whole.
 */
final class ProcessJob implements AutoCloseable
{
    static final String JAVA = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    /**
     * The JIT setting of the ranks these tests start: C1 only. A test's ranks live seconds, several to a core, and
     * C2's compiler threads in each JVM took the cores their ranks needed; what these tests check (results, errors,
     * exits) does not depend on the compiler tier. C2's code still runs under test: in surefire's own JVM (the
     * in-JVM and shared-memory suites, the algorithms and kernels), and in {@link SoakTest}'s ranks, which run long
     * enough for it and start with the JVM's default tiers.
     */
    static final String QUICK_JIT = "-XX:TieredStopAtLevel=1";
    private static final String CLASS_PATH = System.getProperty("java.class.path");
    private static final String OPENS = "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED";

    private final List<Process> processes = new ArrayList<>();
    private final Map<String, String> environment = new java.util.HashMap<>();
    private final List<StringBuilder> outputs = new ArrayList<>();
    private final List<Thread> readers = new ArrayList<>();

    /**
     * Starts {@code n} ranks of {@code mainClass}.
     *
     * @param n         ranks.
     * @param mainClass each rank's main class, on this test's class path.
     * @param heap      the -Xmx value, such as {@code 256m}.
     * @param env       variables every rank gets besides RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT.
     * @param args      arguments of the main class.
     * @return the job.
     * @throws IOException when a process cannot start.
     */
    static ProcessJob start(
        final int n, final Class<?> mainClass, final String heap, final Map<String, String> env, final String... args)
        throws IOException
    {
        final ProcessJob job = onPort(TcpConformanceTest.freePort());
        job.environment.putAll(env);
        for (int r = 0; r < n; r++)
        {
            job.startRank(r, n, mainClass, heap, env, args);
        }
        return job;
    }

    /**
     * A job with no rank started yet, for a test that starts its ranks one by one ({@link #startRank}).
     *
     * @param port the job's MASTER_PORT.
     * @return the job.
     */
    static ProcessJob onPort(final int port)
    {
        final ProcessJob job = new ProcessJob();
        job.environment.put("MASTER_PORT", Integer.toString(port));
        return job;
    }

    /**
     * Starts one rank; its output is {@link #output}'s next index, in the order of these calls.
     *
     * @param rank      its RANK.
     * @param worldSize its WORLD_SIZE.
     * @param mainClass its main class, on this test's class path.
     * @param heap      the -Xmx value, such as {@code 256m}.
     * @param env       variables it gets besides RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT.
     * @param args      arguments of the main class.
     * @throws IOException when the process cannot start.
     */
    void startRank(
        final int rank, final int worldSize, final Class<?> mainClass, final String heap, final Map<String, String> env,
        final String... args)
        throws IOException
    {
        startRank(rank, worldSize, List.of(JAVA, QUICK_JIT), mainClass, heap, env, args);
    }

    /**
     * Starts one rank with another java command: another JDK's, with flags of its own, or behind a command such as
     * {@code unshare}.
     *
     * @param rank      its RANK.
     * @param worldSize its WORLD_SIZE.
     * @param java      the command up to and including java's flags of this rank; the flags every rank gets follow.
     * @param mainClass its main class, on this test's class path.
     * @param heap      the -Xmx value, such as {@code 256m}.
     * @param env       variables it gets besides RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT.
     * @param args      arguments of the main class.
     * @throws IOException when the process cannot start.
     */
    void startRank(
        final int rank, final int worldSize, final List<String> java, final Class<?> mainClass, final String heap,
        final Map<String, String> env, final String... args)
        throws IOException
    {
        final List<String> command = new ArrayList<>(java);
        command.addAll(List.of(OPENS, "-Xmx" + heap,
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", CLASS_PATH, mainClass.getName()));
        command.addAll(List.of(args));
        final ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().keySet().removeIf(name -> name.startsWith("HCCL_") || name.startsWith("OMPI_") ||
            name.startsWith("PMI") || name.startsWith("SLURM_"));
        pb.environment().put("MASTER_ADDR", "127.0.0.1");
        pb.environment().put("MASTER_PORT", environment.get("MASTER_PORT"));
        pb.environment().put("RANK", Integer.toString(rank));
        pb.environment().put("WORLD_SIZE", Integer.toString(worldSize));
        pb.environment().putAll(env);
        add(pb.start());
    }

    private void add(final Process p)
    {
        processes.add(p);
        final StringBuilder output = new StringBuilder();
        outputs.add(output);
        final Thread reader = new Thread(() ->
        {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(),
                StandardCharsets.UTF_8)))
            {
                String line;
                while ((line = in.readLine()) != null)
                {
                    synchronized (output)
                    {
                        output.append(line).append('\n');
                        output.notifyAll();
                    }
                }
            }
            catch (final IOException ignore)
            {
                // the process ended
            }
        });
        reader.setDaemon(true);
        reader.start();
        readers.add(reader);
    }

    /**
     * A variable every rank was given.
     *
     * @param name its name, such as {@code MASTER_PORT}.
     * @return its value, or null.
     */
    String environment(final String name)
    {
        return environment.get(name);
    }

    /**
     * @param rank a rank.
     * @return its process.
     */
    Process process(final int rank)
    {
        return processes.get(rank);
    }

    /**
     * @param rank a rank.
     * @return what it has printed so far.
     */
    String output(final int rank)
    {
        synchronized (outputs.get(rank))
        {
            return outputs.get(rank).toString();
        }
    }

    /**
     * Waits until a rank prints a line containing {@code text}.
     *
     * @param rank    the rank.
     * @param text    what to wait for.
     * @param seconds the longest wait.
     * @return true when it came.
     * @throws InterruptedException when interrupted.
     */
    boolean awaitLine(final int rank, final String text, final long seconds) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        final StringBuilder output = outputs.get(rank);
        synchronized (output)
        {
            while (output.indexOf(text) < 0)
            {
                final long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0)
                {
                    return false;
                }
                output.wait(Math.min(left, 200));
            }
            return true;
        }
    }

    /**
     * Waits for a rank's process to exit and for its last output.
     *
     * @param rank    the rank.
     * @param seconds the longest wait.
     * @return its exit status.
     * @throws Exception when it does not exit in time.
     */
    int awaitExit(final int rank, final long seconds) throws Exception
    {
        if (!processes.get(rank).waitFor(seconds, TimeUnit.SECONDS))
        {
            throw new AssertionError("rank " + rank + " did not exit within " + seconds + " s; its output:\n" +
                output(rank));
        }
        readers.get(rank).join(5000);
        return processes.get(rank).exitValue();
    }

    /** Every output, for failure messages. */
    String outputs()
    {
        final StringBuilder all = new StringBuilder();
        for (int r = 0; r < processes.size(); r++)
        {
            all.append("--- rank ").append(r).append(":\n").append(output(r));
        }
        return all.toString();
    }

    @Override
    public void close()
    {
        processes.forEach(Process::destroyForcibly);
    }
}
