package dev.hccl.core.topology;

import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.CpuList;

import java.util.Collections;
import java.util.TreeSet;

/**
 * Whether a rank has a core to itself, which decides whether its waits may spin ({@code BackoffWait.forNode}): the
 * ranks of its node that may run on one of the CPUs it may run on, itself included, against those CPUs.
 * <p>
 * Ranks bound to CPUs of their own ({@code hcclrun --bind-to core}, Open MPI's binding, Slurm's {@code --cpu-bind})
 * share none, though each process then sees one CPU; ranks in one cpuset share all of it. A rank whose CPUs are not
 * known (ranks as threads of one JVM, a system that does not say) counts as sharing every CPU, and so does every
 * rank of the node when the JVM may use fewer CPUs than its set holds (a container's CPU quota, which the JVM counts
 * and the set does not show): the answer errs towards not spinning, since a rank that spins on a core another rank
 * needs keeps from it the peer whose signal it awaits.
 *
 * @param ranks the ranks of the node that may run where this rank may, itself included.
 * @param cores the CPUs this rank may run on.
 */
public record CoreShare(int ranks, int cores)
{
    /**
     * What a rank shares.
     *
     * @param topology            every rank's place, with the CPUs each published.
     * @param rank                the rank.
     * @param availableProcessors the CPUs the JVM may use ({@link Runtime#availableProcessors()}).
     * @return the ranks that share its CPUs, and how many CPUs it may run on.
     */
    public static CoreShare of(final StaticTopology topology, final int rank, final int availableProcessors)
    {
        final RankLayout layout = topology.layout();
        final int[] here = layout.ranksOn(layout.nodeOf(rank));
        final TreeSet<Integer> mine = cpusOf(topology, rank);
        if (mine.isEmpty() || availableProcessors < mine.size())
        {
            return new CoreShare(here.length, availableProcessors);
        }
        int sharing = 0;
        for (final int r : here)
        {
            final TreeSet<Integer> theirs = r == rank ? mine : cpusOf(topology, r);
            if (theirs.isEmpty() || !Collections.disjoint(mine, theirs))
            {
                sharing++;
            }
        }
        return new CoreShare(sharing, mine.size());
    }

    /** A place's CPUs; none (not known) when it published none, or a list that does not parse. */
    private static TreeSet<Integer> cpusOf(final StaticTopology topology, final int rank)
    {
        try
        {
            return CpuList.parse(topology.place(rank).cpus());
        }
        catch (final NumberFormatException ex)
        {
            return new TreeSet<>();
        }
    }

    @Override
    public String toString()
    {
        return ranks + (1 == ranks ? " rank" : " ranks") + " may run on its " + cores + (1 == cores ? " CPU" : " CPUs");
    }
}
