package dev.hccl.core.bootstrap;

import java.nio.charset.StandardCharsets;

/**
 * What each rank publishes at bootstrap: where its transport listens, on which interface, and which node it is on.
 * Encoded as lines of text; the interface name came last, after the four original fields.
 */
public final class PeerInfo
{
    private final String host;
    private final int port;
    private final String nodeId;
    private final String hostName;
    private final String ifName;

    /**
     * A rank's information, without the interface's name.
     *
     * @param host     the address its transport listens on.
     * @param port     the port.
     * @param nodeId   its node identity.
     * @param hostName its host name.
     */
    public PeerInfo(final String host, final int port, final String nodeId, final String hostName)
    {
        this(host, port, nodeId, hostName, "");
    }

    /**
     * A rank's information.
     *
     * @param host     the address its transport listens on.
     * @param port     the port.
     * @param nodeId   its node identity.
     * @param hostName its host name.
     * @param ifName   the name of the interface that {@code host} belongs to, or empty when unknown.
     */
    public PeerInfo(
        final String host, final int port, final String nodeId, final String hostName, final String ifName)
    {
        this.host = host;
        this.port = port;
        this.nodeId = nodeId;
        this.hostName = hostName;
        this.ifName = ifName;
    }

    /**
     * The address the transport listens on.
     *
     * @return a host name or literal address.
     */
    public String host()
    {
        return host;
    }

    /**
     * The port the transport listens on.
     *
     * @return the port.
     */
    public int port()
    {
        return port;
    }

    /**
     * The node identity.
     *
     * @return the identity.
     */
    public String nodeId()
    {
        return nodeId;
    }

    /**
     * The host name.
     *
     * @return the host name.
     */
    public String hostName()
    {
        return hostName;
    }

    /**
     * The name of the interface the transport listens on.
     *
     * @return the name, such as {@code eth0}, or empty when unknown.
     */
    public String ifName()
    {
        return ifName;
    }

    byte[] encode()
    {
        return String.join("\n", host, Integer.toString(port), nodeId, hostName, ifName)
            .getBytes(StandardCharsets.UTF_8);
    }

    static PeerInfo decode(final byte[] bytes)
    {
        final String[] parts = new String(bytes, StandardCharsets.UTF_8).split("\n", -1);
        // Four fields is a record without the interface (as published before it was added): still understood.
        if (parts.length != 4 && parts.length != 5)
        {
            throw new IllegalArgumentException("malformed peer record in the rendezvous store");
        }
        return new PeerInfo(
            parts[0], Integer.parseInt(parts[1]), parts[2], parts[3], parts.length == 5 ? parts[4] : "");
    }
}
