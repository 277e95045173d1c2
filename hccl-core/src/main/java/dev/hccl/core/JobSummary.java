package dev.hccl.core;

import dev.hccl.api.CommConfig;
import dev.hccl.api.RankLayout;

import java.net.InetSocketAddress;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.function.IntFunction;

/**
 * The one line a job logs at INFO, from rank 0 once its communicator is ready: how many ranks on how many nodes, the
 * transports between them and how the algorithms are chosen, such as
 * {@code hccl-java 0.1.0: 8 ranks on 2 nodes (4 per node); shm within nodes, tcp between nodes; algorithms: cost
 * model}, the version being that of the jar's manifest (none when run from classes).
 * Everything else that creation logs is at DEBUG, so that a working job prints this line and nothing more.
 * <p>
 * The transports are those rank 0 reaches its peers with: within its node and to the other nodes. A pair elsewhere
 * whose preferred transport fails falls back on its own ranks, which warn.
 */
final class JobSummary
{
    private JobSummary()
    {
    }

    /**
     * The line.
     *
     * @param version     hccl-java's version, or null when unknown.
     * @param layout      the job's ranks by node.
     * @param rank        the rank whose links are described (rank 0).
     * @param transportTo the name of the transport ({@code shm}, {@code tcp}) that serves a peer of {@code rank}.
     * @param config      the configuration: {@code HCCL_ALGO}, {@code HCCL_DETERMINISTIC} and whether TLS is on.
     * @return the line, without a trailing newline.
     */
    static String line(final String version, final RankLayout layout, final int rank,
        final IntFunction<String> transportTo, final CommConfig config)
    {
        final int ranks = layout.worldSize();
        final int nodes = layout.nodeCount();
        final StringBuilder sb = new StringBuilder(version == null ? "hccl-java: " : "hccl-java " + version + ": ")
            .append(count(ranks, "rank")).append(" on ").append(count(nodes, "node"));
        if (nodes > 1)
        {
            sb.append(" (").append(perNode(layout)).append(" per node)");
        }
        final int launcherLocal = config.localSize();
        if (launcherLocal != CommConfig.DERIVE && launcherLocal != layout.sizeOf(layout.nodeOf(rank)))
        {
            // Two launchers on one host (hcclrun --nnodes 2, say): the ranks' own numbering and the hosts differ.
            sb.append(" (").append(CommConfig.LOCAL_WORLD_SIZE.variable()).append('=').append(launcherLocal)
                .append(": localRank() and localSize() follow it, the transports and algorithms the hosts)");
        }
        final Set<String> within = new LinkedHashSet<>();
        final Set<String> between = new LinkedHashSet<>();
        final int node = layout.nodeOf(rank);
        for (int peer = 0; peer < ranks; peer++)
        {
            if (peer != rank)
            {
                (layout.nodeOf(peer) == node ? within : between).add(transportTo.apply(peer));
            }
        }
        if (!within.isEmpty() || !between.isEmpty())
        {
            sb.append("; ");
        }
        if (!within.isEmpty())
        {
            sb.append(String.join("+", within)).append(nodes == 1 ? " within the node" : " within nodes");
        }
        if (!between.isEmpty())
        {
            sb.append(within.isEmpty() ? "" : ", ").append(String.join("+", between)).append(" between nodes");
        }
        if (config.get(CommConfig.TLS_CERT) != null)
        {
            // Creation fails unless the certificate, key and CA are given together.
            sb.append("; mutual TLS");
        }
        return sb.append("; algorithms: ").append(algorithms(config)).toString();
    }

    /**
     * The end of rank 0's line in a job that serves its status: {@code ; hccl-status HOST:PORT}, the command that asks
     * it, with {@code --token-file FILE} when {@code HCCL_JOB_TOKEN_FILE} names a file that holds the token (hcclrun's
     * own, which nobody else knows), quoted for a shell when it needs to be.
     *
     * @param address where rank 0 serves the status.
     * @param config  the configuration: {@code HCCL_JOB_TOKEN_FILE}.
     * @return the text to append to {@link #line}.
     */
    static String status(final InetSocketAddress address, final CommConfig config)
    {
        final String file = config.get(CommConfig.JOB_TOKEN_FILE);
        return "; hccl-status " + (file == null || file.isBlank() ? "" : "--token-file " + shellWord(file) + " ") +
            address.getHostString() + ":" + address.getPort();
    }

    /** A word a shell reads back as it is: as it is when it has no special character, else single-quoted. */
    private static String shellWord(final String word)
    {
        return word.matches("[A-Za-z0-9_./:@%+=,-]+") ? word : "'" + word.replace("'", "'\\''") + "'";
    }

    /** How the algorithms are chosen: by the cost model unless {@code HCCL_ALGO} forces some. */
    private static String algorithms(final CommConfig config)
    {
        final String algo = config.algo();
        final String deterministic = config.deterministic() ? ", deterministic" : "";
        if (algo == null || algo.isBlank())
        {
            return "cost model" + deterministic;
        }
        return CommConfig.ALGO.variable() + "=" + algo.trim() + " (the cost model for the rest" + deterministic + ")";
    }

    /** {@code 4} when every node has as many ranks, else {@code 2 to 4}. */
    private static String perNode(final RankLayout layout)
    {
        int fewest = Integer.MAX_VALUE;
        for (int n = 0; n < layout.nodeCount(); n++)
        {
            fewest = Math.min(fewest, layout.sizeOf(n));
        }
        final int most = layout.mostPerNode();
        return fewest == most ? Integer.toString(most) : fewest + " to " + most;
    }

    private static String count(final int n, final String noun)
    {
        return n + " " + noun + (n == 1 ? "" : "s");
    }
}
