package dev.hccl.core.bootstrap;

import java.net.InetAddress;

/**
 * The interface a rank uses, its address there, and why it was chosen.
 */
public final class InterfaceChoice
{
    private final String name;
    private final InetAddress address;
    private final String reason;

    /**
     * A choice.
     *
     * @param name    the interface's name.
     * @param address the address on it that the transport listens on and the other ranks dial.
     * @param reason  why, in words: {@code HCCL_SOCKET_IFNAME=eth} or {@code default: skipped lo, docker0}.
     */
    public InterfaceChoice(final String name, final InetAddress address, final String reason)
    {
        this.name = name;
        this.address = address;
        this.reason = reason;
    }

    /**
     * The interface's name.
     *
     * @return the name, such as {@code eth0}.
     */
    public String name()
    {
        return name;
    }

    /**
     * The address the transport listens on and the other ranks dial.
     *
     * @return the address.
     */
    public InetAddress address()
    {
        return address;
    }

    /**
     * Why this interface was chosen.
     *
     * @return the reason, in words.
     */
    public String reason()
    {
        return reason;
    }

    /**
     * The choice as it is logged: {@code eth0 10.0.0.3 (HCCL_SOCKET_IFNAME=eth)}.
     *
     * @return the description.
     */
    @Override
    public String toString()
    {
        return name + " " + address.getHostAddress() + " (" + reason + ")";
    }
}
