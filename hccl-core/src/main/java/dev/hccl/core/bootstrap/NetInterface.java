package dev.hccl.core.bootstrap;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.List;

/**
 * What {@link InterfaceSelector} needs to know of a network interface, apart from {@link NetworkInterface} so that
 * the selection rules can be tested with interfaces that this machine does not have.
 */
public final class NetInterface
{
    private final String name;
    private final boolean up;
    private final boolean loopback;
    private final List<InetAddress> addresses;

    /**
     * An interface.
     *
     * @param name      its name, such as {@code eth0}.
     * @param up        whether it is up.
     * @param loopback  whether it is a loopback interface.
     * @param addresses its addresses, in the order the system gives them.
     */
    public NetInterface(final String name, final boolean up, final boolean loopback, final List<InetAddress> addresses)
    {
        this.name = name;
        this.up = up;
        this.loopback = loopback;
        this.addresses = List.copyOf(addresses);
    }

    /**
     * This machine's interfaces (of this network namespace), up or not.
     *
     * @return the interfaces, in the order the system lists them.
     * @throws SocketException when the system cannot list them.
     */
    public static List<NetInterface> local() throws SocketException
    {
        final List<NetInterface> result = new ArrayList<>();
        final Enumeration<NetworkInterface> all = NetworkInterface.getNetworkInterfaces();
        if (all == null)
        {
            return result; // the JDK's way of saying there is none
        }
        for (final NetworkInterface nif : Collections.list(all))
        {
            boolean up;
            boolean loopback;
            try
            {
                up = nif.isUp();
                loopback = nif.isLoopback();
            }
            catch (final SocketException ex)
            {
                // An interface that vanished while we listed them: not one to use.
                up = false;
                loopback = false;
            }
            result.add(new NetInterface(nif.getName(), up, loopback, Collections.list(nif.getInetAddresses())));
        }
        return result;
    }

    /**
     * The interface's name.
     *
     * @return the name.
     */
    public String name()
    {
        return name;
    }

    /**
     * Whether the interface is up.
     *
     * @return true when up.
     */
    public boolean up()
    {
        return up;
    }

    /**
     * Whether the interface is a loopback interface.
     *
     * @return true for loopback.
     */
    public boolean loopback()
    {
        return loopback;
    }

    /**
     * The interface's addresses.
     *
     * @return the addresses, unmodifiable.
     */
    public List<InetAddress> addresses()
    {
        return addresses;
    }

    /**
     * The name and addresses, as error messages list interfaces: {@code eth0 10.0.0.3, fe80:0:0:0:0:0:0:1}, IPv4
     * first, with {@code (down)} or {@code (no address)} where that is why it cannot be used.
     *
     * @return the description.
     */
    @Override
    public String toString()
    {
        final StringBuilder sb = new StringBuilder(name);
        if (!up)
        {
            sb.append(" (down)");
        }
        if (addresses.isEmpty())
        {
            sb.append(" (no address)");
        }
        // In the order of preference (IPv4 first), which is easier to read than the system's.
        final List<InetAddress> sorted = new ArrayList<>(addresses);
        sorted.sort(Comparator.comparingInt(InterfaceSelector::addressClass));
        for (int i = 0; i < sorted.size(); i++)
        {
            sb.append(i == 0 ? " " : ", ").append(sorted.get(i).getHostAddress());
        }
        return sb.toString();
    }
}
