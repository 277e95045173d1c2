package dev.hccl.tools.launch;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What one {@code hcclrun} invocation asked for, already validated: the ranks it starts on this node, and where they
 * sit in the job, which other launchers on other nodes may share.
 *
 * @param command     the program and its arguments, started once per rank without a shell
 * @param ranks       how many ranks to start here (&gt;= 1)
 * @param worldSize   how many ranks the job has on all nodes (&gt;= {@code firstRank + ranks})
 * @param firstRank   the job rank of this launcher's first rank: its node's rank times the ranks per node
 * @param masterAddr  the rendezvous address handed to every rank as {@code MASTER_ADDR}
 * @param masterPort  the rendezvous port, or {@code null} to pick a free one (one node only)
 * @param gracePeriod how long a rank may take to exit after SIGTERM before it is killed
 * @param prefix      whether forwarded output lines get a {@code [rank] } prefix
 * @param namespaces  the network namespace of each rank ({@code ranks} entries), or empty to run every
 *                    rank in the launcher's own
 * @param maxRestarts how many times the ranks are started again after one fails (torchrun's {@code --max-restarts})
 * @param cpus        the CPUs each rank is bound to ({@code ranks} lists in {@code taskset}'s format), or empty to
 *                    leave them the launcher's
 * @param libraryCpus each rank's {@code HCCL_LIBRARY_CPUS} ({@code ranks} lists), or empty to leave it unset
 * @param hidden      the ranks of this launcher (0-based) whose output is not printed ({@code --local-ranks-filter})
 */
record LaunchPlan(List<String> command, int ranks, int worldSize, int firstRank, String masterAddr,
                  Integer masterPort, Duration gracePeriod, boolean prefix, List<String> namespaces, int maxRestarts,
                  List<String> cpus, List<String> libraryCpus, Set<Integer> hidden)
{
    LaunchPlan
    {
        command = List.copyOf(command);
        hidden = Set.copyOf(hidden);
        for (final int rank : hidden)
        {
            if (rank < 0 || rank >= ranks)
            {
                throw new IllegalArgumentException("hidden rank " + rank + " of " + ranks);
            }
        }
        namespaces = List.copyOf(namespaces);
        cpus = List.copyOf(cpus);
        libraryCpus = List.copyOf(libraryCpus);
        if (!libraryCpus.isEmpty() && libraryCpus.size() != ranks)
        {
            throw new IllegalArgumentException(libraryCpus.size() + " library CPU lists for " + ranks + " ranks");
        }
        if (!cpus.isEmpty() && cpus.size() != ranks)
        {
            throw new IllegalArgumentException(cpus.size() + " CPU lists for " + ranks + " ranks");
        }
        Objects.requireNonNull(masterAddr, "masterAddr");
        Objects.requireNonNull(gracePeriod, "gracePeriod");
        if (command.isEmpty())
        {
            throw new IllegalArgumentException("command is empty");
        }
        if (ranks < 1)
        {
            throw new IllegalArgumentException("ranks < 1: " + ranks);
        }
        if (firstRank < 0 || worldSize < firstRank + ranks)
        {
            throw new IllegalArgumentException("ranks " + firstRank + ".." + (firstRank + ranks - 1) + " of a job of "
                + worldSize);
        }
        if (!namespaces.isEmpty() && namespaces.size() != ranks)
        {
            throw new IllegalArgumentException(namespaces.size() + " namespaces for " + ranks + " ranks");
        }
        if (maxRestarts < 0)
        {
            throw new IllegalArgumentException("maxRestarts < 0: " + maxRestarts);
        }
    }

    /**
     * A job of one node, started once.
     */
    LaunchPlan(final List<String> command, final int ranks, final String masterAddr, final Integer masterPort,
        final Duration gracePeriod, final boolean prefix, final List<String> namespaces)
    {
        this(command, ranks, ranks, 0, masterAddr, masterPort, gracePeriod, prefix, namespaces, 0, List.of(),
            List.of(), Set.of());
    }

    /**
     * The command line that starts one rank: {@link #command()}, inside the rank's namespace if it has one, bound to
     * its CPUs if it has them.
     *
     * @param rank a rank of this launcher, 0-based
     * @return the program and its arguments
     */
    List<String> commandOf(final int rank)
    {
        final List<String> placed = namespaces.isEmpty() ? command : NetnsPlacement.wrap(namespaces.get(rank), command);
        if (cpus.isEmpty())
        {
            return placed;
        }
        final List<String> bound = new ArrayList<>(List.of("taskset", "-c", cpus.get(rank)));
        bound.addAll(placed);
        return bound;
    }

    /**
     * A rank's index among the ranks that share its node: its namespace, or the launcher's machine.
     *
     * @param rank a rank of this launcher, 0-based
     * @return the local rank
     */
    int localRank(final int rank)
    {
        if (namespaces.isEmpty())
        {
            return rank;
        }
        int local = 0;
        for (int r = 0; r < rank; r++)
        {
            if (namespaces.get(r).equals(namespaces.get(rank)))
            {
                local++;
            }
        }
        return local;
    }

    /**
     * How many ranks share a rank's node.
     *
     * @param rank a rank of this launcher, 0-based
     * @return the local world size
     */
    int localSize(final int rank)
    {
        if (namespaces.isEmpty())
        {
            return ranks;
        }
        int size = 0;
        for (final String ns : namespaces)
        {
            if (ns.equals(namespaces.get(rank)))
            {
                size++;
            }
        }
        return size;
    }
}
