package dev.hccl.core.bootstrap;

import dev.hccl.api.CommConfig;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Chooses the network interface a rank listens on and advertises, as NCCL ({@code NCCL_SOCKET_IFNAME}) and HCCL
 * ({@code HCCL_SOCKET_IFNAME}, {@code HCCL_IF_IP}) users expect.
 * <ul>
 *     <li>{@code HCCL_IF_IP}: that address, which must belong to an up interface; it wins over
 *     {@code HCCL_SOCKET_IFNAME}, as in HCCL.</li>
 *     <li>{@code HCCL_SOCKET_IFNAME}: NCCL's grammar, a comma-separated list of name prefixes ({@code eth,ib}),
 *     {@code ^} in front to exclude instead ({@code ^docker,lo}), {@code =} (after any {@code ^}) for exact names
 *     ({@code =eth0,eth1}).</li>
 *     <li>Then, among the interfaces that are up, have an address and are allowed: ordinary interfaces before
 *     virtual ones ({@code docker*}, {@code br-*}, {@code virbr*}, {@code veth*}), those before loopback, so that
 *     loopback and bridges are used only when nothing else is up; among equals the one that routes to rank 0, then
 *     one with an IPv4 address, then one with a global IPv6 address, then the first by name.</li>
 *     <li>On the interface: the address that routes to rank 0 if it is there, else IPv4 before IPv6, a global IPv6
 *     address before a link-local one.</li>
 * </ul>
 * The rules run on {@link NetInterface}s, not on {@link java.net.NetworkInterface}, so they are tested with made-up
 * interfaces. Choosing is split in two so that a bad variable fails before the rank touches the rendezvous
 * ({@link #of}), while the route to rank 0 is known only after it ({@link #choose}).
 */
public final class InterfaceSelector
{
    private static final String DEFAULT = "default";
    private static final List<String> VIRTUAL_PREFIXES = List.of("docker", "br-", "virbr", "veth");
    private static final int ORDINARY = 0;
    private static final int VIRTUAL = 1;
    private static final int LOOPBACK = 2;

    private final List<NetInterface> candidates;
    private final InetAddress fixed;
    private final String source;
    private final List<String> notes;

    private InterfaceSelector(
        final List<NetInterface> candidates, final InetAddress fixed, final String source, final List<String> notes)
    {
        this.candidates = candidates;
        this.fixed = fixed;
        this.source = source;
        this.notes = notes;
    }

    /**
     * Applies {@code HCCL_IF_IP} and {@code HCCL_SOCKET_IFNAME} to the interfaces.
     *
     * @param interfaces   the machine's interfaces, up or not.
     * @param socketIfname {@code HCCL_SOCKET_IFNAME}'s value, or null (blank is unset).
     * @param ifIp         {@code HCCL_IF_IP}'s value, or null (blank is unset).
     * @return the selector, to {@link #choose} from once the route to rank 0 is known.
     * @throws IllegalArgumentException naming the variable and listing the interfaces with their addresses, when
     *                                  {@code HCCL_IF_IP} is not an address of an up interface or
     *                                  {@code HCCL_SOCKET_IFNAME} allows no interface that is up with an address.
     * @throws IllegalStateException    listing the interfaces when neither is set and no interface is up with an
     *                                  address.
     */
    public static InterfaceSelector of(final List<NetInterface> interfaces, final String socketIfname, final String ifIp)
    {
        final String ifname = blankToNull(socketIfname);
        final String ip = blankToNull(ifIp);
        if (ip != null)
        {
            final String source = CommConfig.IF_IP + "=" + ip;
            final InetAddress wanted = parseLiteral(ip, interfaces);
            for (final NetInterface nif : interfaces)
            {
                if (!nif.up())
                {
                    continue;
                }
                for (final InetAddress address : nif.addresses())
                {
                    if (address.equals(wanted))
                    {
                        // The interface's own address object: an IPv6 link-local one carries its scope.
                        return new InterfaceSelector(List.of(nif), address, source,
                            ifname == null ? List.of() : List.of(CommConfig.SOCKET_IFNAME + " ignored"));
                    }
                }
            }
            throw new IllegalArgumentException(source + " is not an address of an up interface of this host; " +
                describe(interfaces));
        }
        final List<NetInterface> candidates = new ArrayList<>();
        final IfnameFilter filter = ifname == null ? null : new IfnameFilter(ifname);
        for (final NetInterface nif : interfaces)
        {
            if (nif.up() && !nif.addresses().isEmpty() && (filter == null || filter.allows(nif.name())))
            {
                candidates.add(nif);
            }
        }
        if (candidates.isEmpty())
        {
            if (filter != null)
            {
                throw new IllegalArgumentException(CommConfig.SOCKET_IFNAME + "=" + ifname +
                    " matches no interface that is up and has an address; " + describe(interfaces));
            }
            throw new IllegalStateException("no network interface is up with an address; " + describe(interfaces));
        }
        return new InterfaceSelector(List.copyOf(candidates), null,
            filter == null ? DEFAULT : CommConfig.SOCKET_IFNAME + "=" + ifname, List.of());
    }

    /**
     * Chooses the interface and its address.
     *
     * @param routeToRoot the local address of this rank's connection to rank 0, or null when unknown; it decides
     *                    between interfaces of the same kind.
     * @return the choice, with its reason.
     */
    public InterfaceChoice choose(final InetAddress routeToRoot)
    {
        final List<String> reasons = new ArrayList<>(notes);
        if (fixed != null)
        {
            return new InterfaceChoice(candidates.get(0).name(), fixed, reason(reasons));
        }
        final int best = candidates.stream().mapToInt(InterfaceSelector::kind).min().orElseThrow();
        final List<NetInterface> equals = new ArrayList<>();
        final List<String> skipped = new ArrayList<>();
        for (final NetInterface nif : candidates)
        {
            if (kind(nif) == best)
            {
                equals.add(nif);
            }
            else
            {
                skipped.add(nif.name());
            }
        }
        equals.sort(Comparator.<NetInterface>comparingInt(nif -> routes(nif, routeToRoot) ? 0 : 1)
            .thenComparingInt(nif -> addressClass(bestAddress(nif, null)))
            .thenComparing(NetInterface::name));
        final NetInterface chosen = equals.get(0);
        final boolean routed = routes(chosen, routeToRoot);
        if (routed && equals.size() > 1)
        {
            reasons.add("routes to rank 0");
        }
        if (!skipped.isEmpty())
        {
            skipped.sort(Comparator.naturalOrder());
            reasons.add("skipped " + String.join(", ", skipped));
        }
        else if (best != ORDINARY && DEFAULT.equals(source))
        {
            reasons.add("nothing else is up");
        }
        return new InterfaceChoice(chosen.name(), bestAddress(chosen, routed ? routeToRoot : null), reason(reasons));
    }

    /**
     * Lists interfaces as the errors do: by name, each with its addresses or why it cannot be used.
     *
     * @param interfaces the interfaces.
     * @return {@code this host has: eth0 10.0.0.3; lo 127.0.0.1, 0:0:0:0:0:0:0:1}.
     */
    static String describe(final List<NetInterface> interfaces)
    {
        if (interfaces.isEmpty())
        {
            return "this host has no network interface";
        }
        return "this host has: " + interfaces.stream()
            .sorted(Comparator.comparing(NetInterface::name))
            .map(NetInterface::toString)
            .collect(Collectors.joining("; "));
    }

    private String reason(final List<String> reasons)
    {
        return reasons.isEmpty() ? source : source + ": " + String.join("; ", reasons);
    }

    private static int kind(final NetInterface nif)
    {
        if (nif.loopback() || "lo".equals(nif.name()))
        {
            return LOOPBACK;
        }
        for (final String prefix : VIRTUAL_PREFIXES)
        {
            if (nif.name().startsWith(prefix))
            {
                return VIRTUAL;
            }
        }
        return ORDINARY;
    }

    private static boolean routes(final NetInterface nif, final InetAddress routeToRoot)
    {
        return routeToRoot != null && nif.addresses().contains(routeToRoot);
    }

    /**
     * IPv4 before IPv6, a global IPv6 address before a link-local one (usable only with its scope, on one link).
     */
    static int addressClass(final InetAddress address)
    {
        if (address.isLinkLocalAddress())
        {
            return 2;
        }
        return address instanceof Inet4Address ? 0 : 1;
    }

    private static InetAddress bestAddress(final NetInterface nif, final InetAddress routeToRoot)
    {
        InetAddress best = null;
        for (final InetAddress address : nif.addresses())
        {
            if (address.equals(routeToRoot))
            {
                return address;
            }
            if (best == null || addressClass(address) < addressClass(best))
            {
                best = address;
            }
        }
        return best;
    }

    /**
     * Parses an IP literal without ever asking DNS: a host name is refused, not resolved.
     */
    private static InetAddress parseLiteral(final String ip, final List<NetInterface> interfaces)
    {
        final int scope = ip.indexOf('%');
        final String bare = scope < 0 ? ip : ip.substring(0, scope);
        boolean literal = !bare.isEmpty() && (bare.indexOf('.') >= 0 || bare.indexOf(':') >= 0);
        for (int i = 0; i < bare.length() && literal; i++)
        {
            final char c = bare.charAt(i);
            literal = Character.digit(c, 16) >= 0 || c == '.' || c == ':';
        }
        if (literal)
        {
            try
            {
                return InetAddress.getByName(ip);
            }
            catch (final UnknownHostException ex)
            {
                // fall through to the common refusal
            }
        }
        throw new IllegalArgumentException(CommConfig.IF_IP + "=" + ip + " is not an IP address; " +
            describe(interfaces));
    }

    private static String blankToNull(final String value)
    {
        return value == null || value.isBlank() ? null : value.trim();
    }

    /**
     * NCCL's interface list: prefixes, {@code ^} to exclude, {@code =} for exact names.
     */
    private static final class IfnameFilter
    {
        private final boolean exclude;
        private final boolean exact;
        private final List<String> names = new ArrayList<>();

        IfnameFilter(final String spec)
        {
            String rest = spec;
            exclude = rest.startsWith("^");
            if (exclude)
            {
                rest = rest.substring(1);
            }
            exact = rest.startsWith("=");
            if (exact)
            {
                rest = rest.substring(1);
            }
            for (final String part : rest.split(","))
            {
                if (!part.isBlank())
                {
                    names.add(part.trim());
                }
            }
        }

        boolean allows(final String name)
        {
            boolean match = false;
            for (final String wanted : names)
            {
                match |= exact ? name.equals(wanted) : name.startsWith(wanted);
            }
            return match != exclude;
        }
    }
}
