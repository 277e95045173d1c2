package dev.hccl.core;

import dev.hccl.api.CommConfig;
import dev.hccl.api.CommConfigBuilder;
import dev.hccl.api.RankLayout;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The job's one INFO line: ranks and nodes from the layout, transports from what serves rank 0's peers, the algorithm
 * policy from the configuration.
 */
class JobSummaryTest
{
    private static CommConfigBuilder config(final Map<String, String> env)
    {
        return CommConfig.builder().environment(env).worldSize(8).rank(0);
    }

    @Test
    void oneNodeOverSharedMemoryWithTheCostModel()
    {
        assertEquals("hccl-java: 3 ranks on 1 node; shm within the node; algorithms: cost model",
            JobSummary.line(null, RankLayout.singleNode(3), 0, peer -> "shm", config(Map.of()).conclude()));
    }

    /** The command that asks the job's status names the token file, when there is one, as a shell reads it. */
    @Test
    void theStatusCommandNamesTheTokenFileWhenThereIsOne()
    {
        final InetSocketAddress at = new InetSocketAddress("127.0.0.1", 40123);
        assertEquals("; hccl-status 127.0.0.1:40123", JobSummary.status(at, config(Map.of()).conclude()));
        assertEquals("; hccl-status --token-file /run/user/1000/hcclrun-42/token 127.0.0.1:40123",
            JobSummary.status(at, config(Map.of("HCCL_JOB_TOKEN_FILE", "/run/user/1000/hcclrun-42/token")).conclude()));
        assertEquals("; hccl-status --token-file '/home/a b/it'\\''s' 127.0.0.1:40123",
            JobSummary.status(at, config(Map.of("HCCL_JOB_TOKEN_FILE", "/home/a b/it's")).conclude()));
    }

    @Test
    void theVersionComesFirstWhenKnown()
    {
        assertEquals("hccl-java 0.1.0: 3 ranks on 1 node; shm within the node; algorithms: cost model",
            JobSummary.line("0.1.0", RankLayout.singleNode(3), 0, peer -> "shm", config(Map.of()).conclude()));
    }

    @Test
    void nodesNameTheTransportWithinAndBetweenThemFromRankZerosPeers()
    {
        // Ranks 0-3 on node 0, 4-7 on node 1: rank 0 reaches 1-3 over shm, 4-7 over tcp.
        final RankLayout layout = RankLayout.blocks(2, 4);
        assertEquals("hccl-java: 8 ranks on 2 nodes (4 per node); shm within nodes, tcp between nodes; algorithms: " +
            "cost model",
            JobSummary.line(null, layout, 0, peer -> peer < 4 ? "shm" : "tcp", config(Map.of()).conclude()));
    }

    @Test
    void aPairThatFellBackShowsBothTransportsAndUnevenNodesTheirRange()
    {
        final RankLayout layout = RankLayout.ofNodes(0, 0, 0, 1, 1);
        assertEquals("hccl-java: 5 ranks on 2 nodes (2 to 3 per node); shm+tcp within nodes, tcp between nodes; " +
            "algorithms: cost model",
            JobSummary.line(null, layout, 0, peer -> peer == 1 ? "shm" : "tcp", config(Map.of()).conclude()));
    }

    @Test
    void aLauncherWhoseNodesAreNotTheHostsIsNamed()
    {
        // Two hcclruns with --nnodes 2 on one host: 4 ranks on 1 host, 2 a node as the launchers number them.
        assertEquals("hccl-java: 4 ranks on 1 node (LOCAL_WORLD_SIZE=2: localRank() and localSize() follow it, the " +
            "transports and algorithms the hosts); shm within the node; algorithms: cost model",
            JobSummary.line(null, RankLayout.singleNode(4), 0, peer -> "shm",
                config(Map.of("LOCAL_WORLD_SIZE", "2", "LOCAL_RANK", "0")).conclude()));
        assertEquals("hccl-java: 4 ranks on 1 node; shm within the node; algorithms: cost model",
            JobSummary.line(null, RankLayout.singleNode(4), 0, peer -> "shm",
                config(Map.of("LOCAL_WORLD_SIZE", "4", "LOCAL_RANK", "0")).conclude()));
    }

    @Test
    void oneRankPerNodeHasNothingWithinNodes()
    {
        assertEquals("hccl-java: 2 ranks on 2 nodes (1 per node); tcp between nodes; algorithms: cost model",
            JobSummary.line(null, RankLayout.blocks(2, 1), 0, peer -> "tcp", config(Map.of()).conclude()));
    }

    @Test
    void aJobOfOneRankHasNoTransport()
    {
        assertEquals("hccl-java: 1 rank on 1 node; algorithms: cost model",
            JobSummary.line(null, RankLayout.singleNode(1), 0, peer -> null, config(Map.of()).conclude()));
    }

    @Test
    void aForcedAlgorithmAndDeterminismAreNamed()
    {
        assertEquals("hccl-java: 2 ranks on 1 node; tcp within the node; algorithms: HCCL_ALGO=ring (the cost model " +
            "for the rest, deterministic)", JobSummary.line(null, RankLayout.singleNode(2), 0, peer -> "tcp",
            config(Map.of("HCCL_ALGO", " ring ")).deterministic(true).conclude()));
        assertEquals("hccl-java: 2 ranks on 1 node; tcp within the node; algorithms: cost model, deterministic",
            JobSummary.line(null, RankLayout.singleNode(2), 0, peer -> "tcp",
                config(Map.of()).deterministic(true).conclude()));
    }

    @Test
    void mutualTlsIsNamed()
    {
        final CommConfig tls = config(Map.of("HCCL_TLS_CERT", "/c.pem", "HCCL_TLS_KEY", "/k.pem", "HCCL_TLS_CA",
            "/ca.pem")).conclude();
        assertEquals("hccl-java: 2 ranks on 2 nodes (1 per node); tcp between nodes; mutual TLS; algorithms: " +
            "cost model",
            JobSummary.line(null, RankLayout.blocks(2, 1), 0, peer -> "tcp", tls));
    }
}
