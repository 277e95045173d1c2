package dev.hccl.api;

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
        {"PMIX_RANK", null},
    };

    final String rankVariable;
    final String sizeVariable;
    final String rankText;
    final String sizeText;

    private LaunchEnvironment(final String[] pair, final Map<String, String> env)
    {
        rankVariable = pair[0];
        sizeVariable = pair[1];
        rankText = text(env, pair[0]);
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
        if (sizeText == null && !sizeGiven)
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
