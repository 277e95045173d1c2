package dev.hccl.core.bootstrap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The interface rules on made-up machines: HCCL_IF_IP, HCCL_SOCKET_IFNAME's grammar, the defaults, the address on
 * the chosen interface, the reasons logged and the errors.
 */
class InterfaceSelectorTest
{
    private static final NetInterface LO = up("lo", true, "127.0.0.1", "::1");
    private static final NetInterface ETH0 = up("eth0", false, "10.0.0.3", "fe80::1");
    private static final NetInterface ETH1 = up("eth1", false, "10.0.1.3");
    private static final NetInterface IB0 = up("ib0", false, "10.1.0.3");
    private static final NetInterface DOCKER0 = up("docker0", false, "172.17.0.1");
    private static final NetInterface BRIDGE = up("br-1a2b", false, "172.18.0.1");
    private static final NetInterface VIRBR0 = up("virbr0", false, "192.168.122.1");
    private static final NetInterface VETH = up("veth9f8e", false, "fe80::9");
    private static final NetInterface ETH2_DOWN = new NetInterface("eth2", false, false, addresses("10.0.2.3"));
    private static final NetInterface IFB0 = new NetInterface("ifb0", true, false, List.of());

    private static final List<NetInterface> SERVER = List.of(LO, ETH0, ETH1, IB0, DOCKER0, BRIDGE, VIRBR0, VETH,
        ETH2_DOWN, IFB0);

    private static NetInterface up(final String name, final boolean loopback, final String... addresses)
    {
        return new NetInterface(name, true, loopback, addresses(addresses));
    }

    private static List<InetAddress> addresses(final String... literals)
    {
        final List<InetAddress> list = new ArrayList<>();
        for (final String literal : literals)
        {
            list.add(ip(literal));
        }
        return list;
    }

    private static InetAddress ip(final String literal)
    {
        try
        {
            return InetAddress.getByName(literal);
        }
        catch (final UnknownHostException ex)
        {
            throw new AssertionError(literal, ex);
        }
    }

    private static InterfaceChoice choose(
        final List<NetInterface> nics, final String ifname, final String ifIp, final String route)
    {
        return InterfaceSelector.of(nics, ifname, ifIp).choose(route == null ? null : ip(route));
    }

    @ParameterizedTest(name = "HCCL_SOCKET_IFNAME={0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        "eth       | eth0",   // prefix: eth0 and eth1 match, the first by name
        "ib,eth    | eth0",   // the list's order does not rank: both are ordinary, eth0 is first by name
        "ib        | ib0",
        "' ib '    | ib0",    // blanks around a name are ignored
        "=eth1     | eth1",   // exact
        "=eth1,ib0 | eth1",
        "^eth      | ib0",    // exclusion: what is left, by the default order
        "^eth,ib   | br-1a2b",// only virtual and loopback left: virtual first
        "^docker,lo| eth0",
        "^=eth0    | eth1",   // exclusion of an exact name
        "lo        | lo",
        "=lo       | lo",
        "docker    | docker0",
        "^         | eth0",   // excluding nothing is the default order
    })
    void socketIfnameGrammar(final String ifname, final String expected)
    {
        assertEquals(expected, choose(SERVER, ifname, null, null).name());
    }

    @Test
    void socketIfnameReasonNamesTheVariable()
    {
        assertEquals("eth0 10.0.0.3 (HCCL_SOCKET_IFNAME=eth)", choose(SERVER, "eth", null, null).toString());
    }

    @Test
    void socketIfnamePrefersTheInterfaceThatRoutesToRankZeroAmongItsMatches()
    {
        final InterfaceChoice choice = choose(SERVER, "eth", null, "10.0.1.3");
        assertEquals("eth1 10.0.1.3 (HCCL_SOCKET_IFNAME=eth: routes to rank 0)", choice.toString());
    }

    @ParameterizedTest
    @CsvSource({"nosuch", "=eth", "=eth0x", "eth2", "ifb", "'^eth,ib,lo,docker,br,virbr,veth'"})
    void socketIfnameThatMatchesNothingUsableListsTheInterfaces(final String ifname)
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> InterfaceSelector.of(SERVER, ifname, null));
        final String m = ex.getMessage();
        assertTrue(m.startsWith("HCCL_SOCKET_IFNAME=" + ifname + " matches no interface that is up and has an " +
            "address; this host has: "), m);
        assertTrue(m.contains("eth0 10.0.0.3, fe80:0:0:0:0:0:0:1;"), m);
        assertTrue(m.contains("lo 127.0.0.1, 0:0:0:0:0:0:0:1"), m);
        assertTrue(m.contains("eth2 (down) 10.0.2.3"), m);
        assertTrue(m.contains("ifb0 (no address)"), m);
    }

    @Test
    void ifIpChoosesItsInterfaceAndWinsOverSocketIfname()
    {
        assertEquals("ib0 10.1.0.3 (HCCL_IF_IP=10.1.0.3)", choose(SERVER, null, "10.1.0.3", "10.0.0.3").toString());
        assertEquals("ib0 10.1.0.3 (HCCL_IF_IP=10.1.0.3: HCCL_SOCKET_IFNAME ignored)",
            choose(SERVER, "eth", "10.1.0.3", null).toString());
        assertEquals("lo", choose(SERVER, null, "127.0.0.1", null).name());
        assertEquals("lo", choose(SERVER, null, "::1", null).name());
    }

    @ParameterizedTest
    @CsvSource({
        "10.9.9.9, is not an address of an up interface of this host",
        "10.0.2.3, is not an address of an up interface of this host", // eth2's, but eth2 is down
        "myhost, is not an IP address",                                 // never looked up in DNS
        "10.0.0, is not an address of an up interface of this host"})   // Java reads it as 10.0.0.0
    void ifIpThatIsNotAnUpInterfacesAddressListsTheInterfaces(final String ifIp, final String why)
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> InterfaceSelector.of(SERVER, null, ifIp));
        final String m = ex.getMessage();
        assertTrue(m.startsWith("HCCL_IF_IP=" + ifIp + " " + why + "; this host has: "), m);
        assertTrue(m.contains("eth0 10.0.0.3") && m.contains("lo 127.0.0.1") && m.contains("ib0 10.1.0.3"), m);
    }

    @Test
    void defaultSkipsLoopbackAndVirtualInterfacesAndSaysSo()
    {
        assertEquals("eth0 10.0.0.3 (default: skipped br-1a2b, docker0, lo, veth9f8e, virbr0)",
            choose(SERVER, null, null, null).toString());
        assertEquals("eth0 10.0.0.3 (default: skipped docker0, lo)",
            choose(List.of(LO, DOCKER0, ETH0), " ", "", null).toString()); // blank is unset
    }

    @Test
    void defaultUsesVirtualThenLoopbackOnlyWhenNothingElseIsUp()
    {
        assertEquals("docker0 172.17.0.1 (default: skipped lo)", choose(List.of(LO, DOCKER0), null, null, null)
            .toString());
        assertEquals("lo 127.0.0.1 (default: nothing else is up)",
            choose(List.of(LO, ETH2_DOWN, IFB0), null, null, null).toString());
        // A loopback interface named otherwise is still loopback; "lo" is loopback even when not flagged so.
        assertEquals("eth0", choose(List.of(up("lo0", true, "127.0.0.1"), ETH0), null, null, null).name());
        assertEquals("eth0", choose(List.of(up("lo", false, "127.0.0.1"), ETH0), null, null, null).name());
    }

    @Test
    void defaultPrefersTheInterfaceThatRoutesToRankZeroThenTheFirstByName()
    {
        assertEquals("eth0", choose(SERVER, null, null, null).name());
        assertEquals("eth1 10.0.1.3 (default: routes to rank 0; skipped br-1a2b, docker0, lo, veth9f8e, virbr0)",
            choose(SERVER, null, null, "10.0.1.3").toString());
        assertEquals("ib0", choose(SERVER, null, null, "10.1.0.3").name());
        // Rank 0 reached over loopback (MASTER_ADDR=127.0.0.1) does not make loopback the choice.
        assertEquals("eth0", choose(SERVER, null, null, "127.0.0.1").name());
        // The route decides only among interfaces of one kind: a bridge that routes to rank 0 is still skipped.
        assertEquals("eth0", choose(SERVER, null, null, "172.17.0.1").name());
        // With only loopback and a veth (a node of a simulated cluster), the veth, as the route says.
        assertEquals("veth9f8e", choose(List.of(LO, VETH), null, null, "fe80::9").name());
    }

    @Test
    void ipv4BeforeIpv6UnlessOnlyIpv6()
    {
        final NetInterface both = up("eth0", false, "fe80::1", "fd00::2", "192.0.2.2");
        assertEquals("192.0.2.2", choose(List.of(both), null, null, null).address().getHostAddress());
        final NetInterface v6 = up("eth0", false, "fe80::1", "fd00::2");
        assertEquals("fd00:0:0:0:0:0:0:2", choose(List.of(v6), null, null, null).address().getHostAddress());
        // An interface with an IPv4 address before one with only IPv6, and a global IPv6 before link-local only.
        final NetInterface linkLocalOnly = up("eno1", false, "fe80::5");
        final NetInterface globalV6 = up("eno2", false, "fd00::6");
        assertEquals("eth1", choose(List.of(linkLocalOnly, globalV6, ETH1), null, null, null).name());
        assertEquals("eno2", choose(List.of(linkLocalOnly, globalV6), null, null, null).name());
        assertEquals("eno1", choose(List.of(linkLocalOnly, LO), null, null, null).name());
    }

    @Test
    void theAddressThatRoutesToRankZeroIsTheOneUsedOnItsInterface()
    {
        final NetInterface two = up("eth0", false, "10.0.0.3", "10.0.0.4", "fd00::2");
        assertEquals("10.0.0.4", choose(List.of(two), null, null, "10.0.0.4").address().getHostAddress());
        assertEquals("fd00:0:0:0:0:0:0:2", choose(List.of(two), null, null, "fd00::2").address().getHostAddress());
        assertEquals("10.0.0.3", choose(List.of(two), null, null, "10.9.9.9").address().getHostAddress());
    }

    @Test
    void noInterfaceUpIsAnErrorListingThem()
    {
        final IllegalStateException ex = assertThrows(IllegalStateException.class,
            () -> InterfaceSelector.of(List.of(ETH2_DOWN, IFB0), null, null));
        assertEquals("no network interface is up with an address; this host has: eth2 (down) 10.0.2.3; " +
            "ifb0 (no address)", ex.getMessage());
    }

    @Test
    void thisMachineHasAnInterfaceToChoose() throws Exception
    {
        final List<NetInterface> local = NetInterface.local();
        final InterfaceChoice choice = InterfaceSelector.of(local, null, null).choose(null);
        assertTrue(local.stream().anyMatch(nif -> nif.name().equals(choice.name()) && nif.up() &&
            nif.addresses().contains(choice.address())), choice + " among " + local);
    }
}
