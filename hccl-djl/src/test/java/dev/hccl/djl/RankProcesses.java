package dev.hccl.djl;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@link TrainingRank} in separate JVMs, one per rank, on loopback with the launcher's variables, or alone as the
 * single-process reference: DJL's PyTorch engine allows one gradient collector in a JVM, so ranks cannot be threads.
 * Each process's output goes to a file, read when it has exited (or at any time, for a test waiting for a line).
 */
final class RankProcesses implements AutoCloseable
{
    private static final String JAVA = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    /**
     * C1 only: ranks that live seconds, several to a core, spent the cores on C2's compilations; the results these
     * tests check do not depend on the compiler tier (the training's arithmetic is libtorch's).
     */
    private static final String QUICK_JIT = "-XX:TieredStopAtLevel=1";

    private final List<Process> processes = new ArrayList<>();
    private final List<Path> outputs = new ArrayList<>();

    private RankProcesses()
    {
    }

    /** The JVM command of one process of TrainingRank with these arguments. */
    private static List<String> command(final List<String> args)
    {
        final List<String> command = new ArrayList<>(List.of(JAVA, QUICK_JIT,
            "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx384m", "-Dai.djl.offline=true",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", System.getProperty("java.class.path"),
            TrainingRank.class.getName()));
        command.addAll(args);
        return command;
    }

    private static ProcessBuilder builder(final List<String> args, final Path output)
    {
        final ProcessBuilder pb = new ProcessBuilder(command(args)).redirectErrorStream(true)
            .redirectOutput(output.toFile());
        pb.environment().keySet().removeIf(name -> name.startsWith("HCCL_") || name.startsWith("OMPI_") ||
            name.startsWith("PMI") || name.startsWith("SLURM_"));
        // libtorch is unpacked once into the build's directory, not the user's home; one thread a rank, as CI's two
        // cores are shared by all of them (and results do not depend on it).
        pb.environment().put("DJL_CACHE_DIR", Paths.get("target", "djl-cache").toAbsolutePath().toString());
        pb.environment().put("OMP_NUM_THREADS", "1");
        return pb;
    }

    /**
     * Starts {@code n} ranks.
     *
     * @param n    ranks.
     * @param dir  where their outputs go.
     * @param env  variables besides RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT.
     * @param args TrainingRank's arguments.
     * @return the job.
     * @throws IOException when a process cannot start.
     */
    static RankProcesses start(final int n, final Path dir, final Map<String, String> env, final List<String> args)
        throws IOException
    {
        final int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            port = s.getLocalPort();
        }
        final RankProcesses job = new RankProcesses();
        for (int r = 0; r < n; r++)
        {
            final Path output = dir.resolve("rank-" + r + ".log");
            final ProcessBuilder pb = builder(args, output);
            pb.environment().put("MASTER_ADDR", "127.0.0.1");
            pb.environment().put("MASTER_PORT", Integer.toString(port));
            pb.environment().put("RANK", Integer.toString(r));
            pb.environment().put("WORLD_SIZE", Integer.toString(n));
            pb.environment().put("LOCAL_RANK", Integer.toString(r));
            pb.environment().put("LOCAL_WORLD_SIZE", Integer.toString(n));
            pb.environment().putAll(env);
            job.outputs.add(output);
            job.processes.add(pb.start());
        }
        return job;
    }

    /**
     * Runs the single-process reference to its end.
     *
     * @param dir  where its output goes.
     * @param args TrainingRank's arguments, {@code --reference WORLD} among them.
     * @return its output.
     * @throws Exception when it fails or does not end in 5 minutes.
     */
    static String reference(final Path dir, final List<String> args) throws Exception
    {
        final Path output = dir.resolve("reference.log");
        final Process p = builder(args, output).start();
        if (!p.waitFor(5, TimeUnit.MINUTES))
        {
            p.destroyForcibly();
            throw new AssertionError("the reference did not end in 5 minutes: " + read(output));
        }
        final String text = read(output);
        if (p.exitValue() != 0)
        {
            throw new AssertionError("the reference failed with " + p.exitValue() + ": " + text);
        }
        return text;
    }

    private static String read(final Path output) throws IOException
    {
        return Files.exists(output) ? Files.readString(output, StandardCharsets.UTF_8) : "";
    }

    int size()
    {
        return processes.size();
    }

    /**
     * @param rank a rank.
     * @return what it has printed so far.
     * @throws IOException when the file cannot be read.
     */
    String output(final int rank) throws IOException
    {
        return read(outputs.get(rank));
    }

    /** Every rank's output, for a failure's message. */
    String outputs()
    {
        final StringBuilder all = new StringBuilder();
        for (int r = 0; r < outputs.size(); r++)
        {
            try
            {
                all.append("--- rank ").append(r).append(" ---\n").append(output(r));
            }
            catch (final IOException e)
            {
                all.append("--- rank ").append(r).append(": ").append(e).append('\n');
            }
        }
        return all.toString();
    }

    /**
     * Waits for a rank's exit.
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
            throw new AssertionError("rank " + rank + " did not exit within " + seconds + " s:\n" + outputs());
        }
        return processes.get(rank).exitValue();
    }

    /**
     * Waits until a rank prints a line containing {@code text}.
     *
     * @param rank    the rank.
     * @param text    what to wait for.
     * @param seconds the longest wait.
     * @return true when it came.
     * @throws Exception when interrupted or the file cannot be read.
     */
    boolean awaitLine(final int rank, final String text, final long seconds) throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!output(rank).contains(text))
        {
            if (System.nanoTime() > deadline)
            {
                return false;
            }
            Thread.sleep(50);
        }
        return true;
    }

    @Override
    public void close()
    {
        for (final Process p : processes)
        {
            p.destroyForcibly();
        }
    }
}
