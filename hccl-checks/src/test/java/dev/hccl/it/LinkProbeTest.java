package dev.hccl.it;

import dev.hccl.api.AlgorithmChoice;
import dev.hccl.api.CommConfig;
import dev.hccl.api.CommConfigBuilder;
import dev.hccl.api.Communicator;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.TopoProbe;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code HCCL_TOPO_PROBE} over real TCP, ranks as threads: two "nodes" on loopback by {@code HCCL_NODE_ID}. What the
 * probe measures is not asserted (loopback on a shared VM); that every rank ends with the same measured figures, and
 * so the same choices, is, together with when the probe runs at all.
 */
@Timeout(300)
class LinkProbeTest
{
    private static final long SIZE = 32L << 20;

    private static CommConfigBuilder tcp(final int rank, final int n, final int port, final String nodeId)
    {
        return CommConfig.builder().environment(Map.of())
            .rank(rank).worldSize(n).masterAddr("127.0.0.1").masterPort(port).nodeId(nodeId)
            .connectTimeout(Duration.ofSeconds(60)).execTimeout(Duration.ofSeconds(60));
    }

    /** Each rank's account of the all-reduce choice at 32 MiB, after init with the configuration given. */
    private static List<AlgorithmChoice> choices(final int n, final IntFunction<CommConfig> config) throws Exception
    {
        return Ranks.run(n, 120, rank ->
        {
            try (Communicator comm = Hccl.init(config.apply(rank)))
            {
                final AlgorithmChoice choice = comm.algorithmFor(Operation.ALL_REDUCE, SIZE);
                comm.barrier();
                return choice;
            }
        });
    }

    @Test
    void acrossNodesEveryRankMeasuresTheSameLinksAndChoosesAlike() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final List<AlgorithmChoice> choices = choices(4, rank -> tcp(rank, 4, port, "node" + rank / 2)
            .topoProbe(TopoProbe.AUTO).conclude());
        for (final AlgorithmChoice choice : choices)
        {
            assertTrue(choice.model().startsWith("2 nodes x 2 ranks, measured: "), choice.model());
            assertEquals(choices.get(0), choice, "every rank holds rank 0's figures");
        }
    }

    @Test
    void oneNodeMeasuresOnlyWhenAsked() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        for (final AlgorithmChoice choice : choices(2, rank -> tcp(rank, 2, port, "same")
            .topoProbe(TopoProbe.AUTO).conclude()))
        {
            assertTrue(choice.model().contains("defaults"), choice.model());
        }
        final int port2 = TcpConformanceTest.freePort();
        final List<AlgorithmChoice> asked =
            choices(2, rank -> tcp(rank, 2, port2, "same").topoProbe(TopoProbe.ON).conclude());
        assertTrue(asked.get(0).model().startsWith("1 node x 2 ranks, measured: "), asked.get(0).model());
        assertEquals(asked.get(0), asked.get(1));
    }

    @Test
    void byDefaultNothingIsMeasuredEvenAcrossNodes() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        for (final AlgorithmChoice choice : choices(4, rank -> tcp(rank, 4, port, "node" + rank / 2).conclude()))
        {
            // The ranks of each node share memory, so the defaults price that class within the nodes.
            assertTrue(choice.model().startsWith("2 nodes x 2 ranks, defaults (shared memory within nodes): "),
                choice.model());
        }
    }

    @Test
    void deterministicModeKeepsTheDefaults() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        for (final AlgorithmChoice choice : choices(4, rank ->
            tcp(rank, 4, port, "node" + rank % 2).topoProbe(TopoProbe.ON).deterministic(true).conclude()))
        {
            assertTrue(choice.model().contains("defaults"), choice.model());
        }
    }

    @Test
    void ranksThatDisagreeOnProbingFailAtInit() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final List<Throwable> outcomes = Ranks.run(2, 60, rank ->
        {
            try (Communicator comm = Hccl.init(tcp(rank, 2, port, "n" + rank)
                .topoProbe(rank == 0 ? TopoProbe.OFF : TopoProbe.AUTO).connectTimeout(Duration.ofSeconds(3))
                .conclude()))
            {
                comm.barrier(); // only if init wrongly succeeded: the assertions below then fail
                return null;
            }
            catch (final HcclException ex)
            {
                return ex;
            }
        });
        final Throwable rank1 = outcomes.get(1);
        assertTrue(rank1 instanceof HcclException && ((HcclException)rank1).errorCode() == ErrorCode.E_PARA &&
            rank1.getMessage().contains("probe=off") && rank1.getMessage().contains("probe=auto"),
            String.valueOf(rank1));
        assertTrue(outcomes.get(0) instanceof HcclException, String.valueOf(outcomes.get(0)));
    }
}
