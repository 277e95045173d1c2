package dev.hccl.api;

import java.util.List;
import java.util.Map;

/**
 * The rank and world size that a launcher gives through the environment. Each launcher sets a pair of variables; the
 * first pair of which either is set is the one read, and both must then be set, so that a rank of one launcher is
 * never paired with the size of another.
 */
final class LaunchEnvironment
{
    /** Launchers' pairs, in the order they are looked for; PMIx gives no size of its own. */
    private static final String[][] PAIRS = {
        {CommConfig.RANK.variable(), CommConfig.WORLD_SIZE.variable()},
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
        {"PMI_RANK", "PMI_SIZE"},
        {"SLURM_PROCID", "SLURM_NTASKS"},
        {"RANK_ID", "RANK_SIZE"},
        {"PMIX_RANK", null},
    };

    /** A Kubernetes Indexed Job's (and JobSet's) pod index, read as the rank when RANK is not set. */
    static final String INDEXED_JOB_RANK = "JOB_COMPLETION_INDEX";
    /** Slurm's rank variable: srun's tasks. */
    private static final String SLURM_RANK = "SLURM_PROCID";
    /** Where srun's step runs (set by srun), else the job's allocation (set by sbatch and salloc too). */
    private static final List<String> SLURM_NODELISTS = List.of("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST",
        "SLURM_NODELIST");
    /** PyTorch Lightning's SLURM port: 15000 plus the job id's last four digits. */
    private static final int SLURM_BASE_PORT = 15000;

    /**
     * A value a launcher implies for a setting that nothing set.
     *
     * @param variable the launcher's variable it comes from.
     * @param text     the value, as a variable would give it.
     */
    record Derived(String variable, String text)
    {
    }

    /** Whether RANK_TABLE_FILE is set: the table gives the world size, so a rank alone is no half-set pair. */
    private final boolean rankTableGiven;
    final String rankVariable;
    final String sizeVariable;
    final String rankText;
    final String sizeText;

    private LaunchEnvironment(final String[] pair, final Map<String, String> env)
    {
        // A Kubernetes Indexed Job gives each pod its index, not a RANK: with WORLD_SIZE set (by the manifest),
        // torchrun's pair takes the index. Without it the index means nothing here (an mpirun in such a pod, say).
        rankVariable = pair == PAIRS[0] && text(env, pair[0]) == null && text(env, pair[1]) != null &&
            text(env, INDEXED_JOB_RANK) != null ? INDEXED_JOB_RANK : pair[0];
        sizeVariable = pair[1];
        rankText = text(env, rankVariable);
        rankTableGiven = text(env, CommConfig.RANK_TABLE_FILE.variable()) != null;
        sizeText = pair[1] == null ? null : text(env, pair[1]);
    }

    /**
     * The launcher's variables found in {@code env}.
     *
     * @param env the environment.
     * @return the first pair of which a variable is set, or null when none is.
     */
    static LaunchEnvironment read(final Map<String, String> env)
    {
        for (final String[] pair : PAIRS)
        {
            final LaunchEnvironment found = new LaunchEnvironment(pair, env);
            if (found.rankText != null || found.sizeText != null)
            {
                return found;
            }
        }
        return null;
    }

    /**
     * Why the pair cannot be used alone: one of its variables is missing (a size of 1 needs no rank).
     *
     * @param rankGiven whether the rank is given otherwise (the builder).
     * @param sizeGiven whether the size is given otherwise.
     * @return the problem, or null when there is none.
     */
    String problem(final boolean rankGiven, final boolean sizeGiven)
    {
        if (sizeText == null && !sizeGiven && !rankTableGiven)
        {
            return rankVariable + " is set (" + rankText + ") but " + (sizeVariable != null ? sizeVariable + " is not" :
                "the launcher gives no world size") + ": set " + (sizeVariable != null ? sizeVariable :
                CommConfig.WORLD_SIZE.variable()) + " too, or pass CommConfig.builder().worldSize(n)";
        }
        if (rankText == null && !rankGiven && !"1".equals(sizeText))
        {
            return sizeVariable + " is set (" + sizeText + ") but " + rankVariable + " is not: set " + rankVariable +
                " too, or pass CommConfig.builder().rank(r)";
        }
        return null;
    }

    /**
     * What the launcher implies for a rendezvous setting that neither the builder nor the environment gives. Under
     * srun: rank 0's host is the first node of the step (its task 0 runs there), and the port follows the job id as
     * PyTorch Lightning's does, so that two jobs sharing a node do not meet. Other launchers imply nothing.
     *
     * @param setting the setting.
     * @param env     the environment.
     * @return the value, or null.
     * @throws IllegalArgumentException naming the variable when Slurm's host list is malformed.
     */
    Derived derive(final Setting<?> setting, final Map<String, String> env)
    {
        // srun numbered this rank: through its own variables, or through PMI's (srun --mpi=pmi2 sets PMI_RANK and
        // PMI_SIZE, read first) when Slurm's agree with them.
        final boolean srun = SLURM_RANK.equals(rankVariable) || (rankText != null &&
            rankText.equals(text(env, SLURM_RANK)) && sizeText != null && sizeText.equals(text(env, "SLURM_NTASKS")));
        if (!srun)
        {
            return null;
        }
        if (setting == CommConfig.MASTER_ADDR)
        {
            for (final String name : SLURM_NODELISTS)
            {
                final String hosts = text(env, name);
                if (hosts != null)
                {
                    try
                    {
                        return new Derived(name, SlurmHostlist.first(hosts));
                    }
                    catch (final IllegalArgumentException ex)
                    {
                        throw new IllegalArgumentException(name + ": " + ex.getMessage() + "; set MASTER_ADDR to " +
                            "rank 0's host instead", ex);
                    }
                }
            }
        }
        final String job = text(env, "SLURM_JOB_ID");
        if (setting == CommConfig.MASTER_PORT && job != null && job.chars().allMatch(Character::isDigit))
        {
            final String last = job.substring(Math.max(0, job.length() - 4));
            return new Derived("SLURM_JOB_ID", Integer.toString(SLURM_BASE_PORT + Integer.parseInt(last)));
        }
        return null;
    }

    /**
     * Every variable looked for, for a message.
     *
     * @return the pairs, launcher by launcher.
     */
    static String looked()
    {
        final StringBuilder s = new StringBuilder();
        for (final String[] pair : PAIRS)
        {
            s.append(s.length() == 0 ? "" : ", ").append(pair[0]).append(pair[1] == null ? "" : "/" + pair[1]);
        }
        return s.toString();
    }

    private static String text(final Map<String, String> env, final String name)
    {
        final String value = env.get(name);
        return value == null || value.isBlank() ? null : value.trim();
    }
}
