package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.api.RankLayout;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A rank that prints the topology its communicator learnt at creation, one line, for
 * {@link SimulatedClusterTest}: {@code TOPOLOGY rank R of N: nodes M, node K, topology local rank L,
 * ranks on node [..], communicator local rank L2 of S2, transports [shm, self, tcp, ...]}.
 */
public final class TopologyReport
{
    private TopologyReport()
    {
    }

    /**
     * Joins the job described by the environment, prints the line, and leaves.
     *
     * @param args ignored.
     */
    public static void main(final String[] args)
    {
        try (Communicator comm = Hccl.init())
        {
            final RankLayout layout = comm.topology().layout();
            final int rank = comm.rank();
            final int node = layout.nodeOf(rank);
            System.out.println("TOPOLOGY rank " + rank + " of " + comm.worldSize() + ": nodes " +
                layout.nodeCount() + ", node " + node + ", topology local rank " + layout.localRank(rank) +
                ", ranks on node " + Arrays.toString(layout.ranksOn(node)) + ", communicator local rank " +
                comm.localRank() + " of " + comm.localSize() + ", transports " + transports(comm));
            // Nobody leaves before everyone has printed, so a late rank never finds its peers gone.
            comm.barrier();
        }
    }

    private static List<String> transports(final Communicator comm)
    {
        final List<String> row = new ArrayList<>();
        for (int peer = 0; peer < comm.worldSize(); peer++)
        {
            row.add(comm.transportTo(peer));
        }
        return row;
    }
}
