package dev.hccl.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Ranks started with the variables exactly as {@code srun} sets them for one node's three tasks, and nothing else: no
 * {@code RANK}, {@code MASTER_ADDR} or {@code MASTER_PORT}. Each numbers itself from {@code SLURM_PROCID} and
 * {@code SLURM_NTASKS}, finds rank 0's host as the step's first node ({@code SLURM_STEP_NODELIST}) and the port from
 * {@code SLURM_JOB_ID}, and checks every collective. (A real Slurm is not brought up here: see the closing note of
 * issue 15.)
 */
@Timeout(300)
class SlurmEnvironmentTest
{
    private static final int TASKS = 3;

    @Test
    void tasksNumberedBySrunFindRankZeroAndComputeRight() throws Exception
    {
        final long jobId = jobIdWithAFreePort();
        final List<Map<String, String>> tasks = new ArrayList<>();
        for (int t = 0; t < TASKS; t++)
        {
            tasks.add(srun(t, jobId));
        }
        ForeignLaunch.runAndCheck(tasks);
    }

    /** What srun sets for task {@code t} of a one-node step of {@link #TASKS} tasks in a two-node allocation. */
    private static Map<String, String> srun(final int t, final long jobId)
    {
        final String id = Long.toString(jobId);
        return Map.ofEntries(
            Map.entry("SLURM_PROCID", Integer.toString(t)), Map.entry("SLURM_NTASKS", Integer.toString(TASKS)),
            Map.entry("SLURM_NPROCS", Integer.toString(TASKS)), Map.entry("SLURM_LOCALID", Integer.toString(t)),
            Map.entry("SLURM_NODEID", "0"), Map.entry("SLURM_JOB_ID", id), Map.entry("SLURM_JOBID", id),
            Map.entry("SLURM_STEP_ID", "0"), Map.entry("SLURM_STEPID", "0"),
            Map.entry("SLURM_JOB_NODELIST", "localhost,node[02]"), Map.entry("SLURM_NODELIST", "localhost,node[02]"),
            Map.entry("SLURM_STEP_NODELIST", "localhost"), Map.entry("SLURM_STEP_NUM_NODES", "1"),
            Map.entry("SLURM_STEP_NUM_TASKS", Integer.toString(TASKS)),
            Map.entry("SLURM_STEP_TASKS_PER_NODE", Integer.toString(TASKS)),
            Map.entry("SLURM_TASKS_PER_NODE", TASKS + ",1"), Map.entry("SLURM_NNODES", "2"),
            Map.entry("SLURM_JOB_NUM_NODES", "2"), Map.entry("SLURMD_NODENAME", "localhost"),
            Map.entry("SLURM_CPUS_ON_NODE", "2"), Map.entry("SLURM_LAUNCH_NODE_IPADDR", "127.0.0.1"),
            Map.entry("SLURM_SRUN_COMM_HOST", "127.0.0.1"), Map.entry("SLURM_TOPOLOGY_ADDR", "localhost"));
    }

    /** A job id whose port (15000 plus its last four digits) is free here now. */
    private static long jobIdWithAFreePort() throws IOException
    {
        for (int last = (int)(System.nanoTime() % 10_000 + 10_000) % 10_000, tries = 0; tries < 10_000;
             last = (last + 1) % 10_000, tries++)
        {
            try (ServerSocket probe = new ServerSocket(15_000 + last))
            {
                return 4_200_000L + probe.getLocalPort() - 15_000;
            }
            catch (final IOException taken)
            {
                // the next one
            }
        }
        throw new IOException("no free port from 15000 to 24999");
    }
}
