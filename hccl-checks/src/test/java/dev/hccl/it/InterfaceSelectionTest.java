package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.CommConfigBuilder;
import dev.hccl.api.Communicator;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.core.topology.StaticTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * HCCL_SOCKET_IFNAME and HCCL_IF_IP over real TCP (ranks as threads): the chosen interface is what the ranks listen
 * on and dial, every rank learns every rank's interface, and a selection that matches nothing fails every rank's
 * init at once with the interfaces listed. Loopback is the one interface every machine has.
 */
@Timeout(120)
class InterfaceSelectionTest
{
    private static final int RANKS = 3;

    private static CommConfigBuilder tcp(final int rank, final int port)
    {
        return CommConfig.builder().environment(Map.of()).rank(rank).worldSize(RANKS).masterAddr("127.0.0.1")
            .masterPort(port).connectTimeout(Duration.ofSeconds(30)).execTimeout(Duration.ofSeconds(30));
    }

    /**
     * Each rank's sum of (rank + 1) over all ranks, and the interfaces and addresses its topology holds.
     */
    private static List<String[]> runAllReduce(final RankConfig config) throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        return Ranks.run(RANKS, 60, rank ->
        {
            try (Communicator comm = Hccl.init(config.of(rank, port)))
            {
                final int[] value = {rank + 1};
                comm.allReduce(value, ReduceOp.SUM);
                final StaticTopology topology = assertInstanceOf(StaticTopology.class, comm.topology());
                final String[] seen = new String[1 + 2 * RANKS];
                seen[0] = Integer.toString(value[0]);
                for (int r = 0; r < RANKS; r++)
                {
                    seen[1 + 2 * r] = topology.place(r).interfaceName();
                    seen[2 + 2 * r] = topology.place(r).address();
                }
                return seen;
            }
        });
    }

    private interface RankConfig
    {
        CommConfig of(int rank, int port);
    }

    @ParameterizedTest
    @ValueSource(strings = {"lo", "=lo", "lo,nosuch"})
    void socketIfnameLoopbackIsWhatEveryRankListensOnAndDials(final String ifname) throws Exception
    {
        final List<String[]> seen = runAllReduce((rank, port) -> tcp(rank, port).socketIfname(ifname).conclude());
        for (final String[] s : seen)
        {
            assertArrayEquals(new String[]{"6", "lo", "127.0.0.1", "lo", "127.0.0.1", "lo", "127.0.0.1"}, s);
        }
    }

    @Test
    void ifIpLoopbackIsWhatEveryRankListensOnAndDials() throws Exception
    {
        final List<String[]> seen = runAllReduce((rank, port) -> tcp(rank, port).ifIp("127.0.0.1").conclude());
        for (final String[] s : seen)
        {
            assertArrayEquals(new String[]{"6", "lo", "127.0.0.1", "lo", "127.0.0.1", "lo", "127.0.0.1"}, s);
        }
    }

    @Test
    void byDefaultEveryRankLearnsEveryRanksInterface() throws Exception
    {
        // Which interface depends on the machine; that every rank chose one and all agree on it does not.
        final List<String[]> seen = runAllReduce((rank, port) -> tcp(rank, port).conclude());
        for (final String[] s : seen)
        {
            assertEquals("6", s[0]);
            assertArrayEquals(seen.get(0), s);
            for (int i = 1; i < s.length; i++)
            {
                assertFalse(s[i].isEmpty(), "rank's interface or address unknown: " + String.join(" ", s));
            }
        }
    }

    @Test
    void socketIfnameThatMatchesNothingFailsEveryRankListingTheInterfaces() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final List<HcclException> errors = Ranks.run(RANKS, 60, rank -> assertThrows(HcclException.class,
            () -> Hccl.init(tcp(rank, port).socketIfname("nosuch").conclude())));
        assertEquals(RANKS, errors.size());
        for (final HcclException e : errors)
        {
            assertEquals(ErrorCode.E_PARA, e.errorCode(), e.getMessage());
            assertEquals(Operation.INIT, e.operation());
            assertTrue(e.getMessage().contains("HCCL_SOCKET_IFNAME=nosuch matches no interface that is up and has " +
                "an address; this host has: "), e.getMessage());
            assertTrue(e.getMessage().contains("lo 127.0.0.1"), e.getMessage());
        }
    }

    @Test
    void ifIpThatIsNotThisHostsFailsEveryRankListingTheInterfaces() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        // 203.0.113.0/24 is TEST-NET-3, documentation only: no machine has it.
        final List<HcclException> errors = Ranks.run(RANKS, 60, rank -> assertThrows(HcclException.class,
            () -> Hccl.init(tcp(rank, port).ifIp("203.0.113.7").conclude())));
        for (final HcclException e : errors)
        {
            assertEquals(ErrorCode.E_PARA, e.errorCode(), e.getMessage());
            assertTrue(e.getMessage().contains("HCCL_IF_IP=203.0.113.7 is not an address of an up interface of " +
                "this host; this host has: "), e.getMessage());
            assertTrue(e.getMessage().contains("lo 127.0.0.1"), e.getMessage());
        }
    }
}
