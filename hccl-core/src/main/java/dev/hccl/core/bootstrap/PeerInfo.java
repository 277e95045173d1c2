package dev.hccl.core.bootstrap;

import java.nio.charset.StandardCharsets;

/**
 * What each rank publishes at bootstrap: where its transport listens and which node it is on.
 */
public final class PeerInfo
{
    private final String host;
    private final int port;
    private final String nodeId;
    private final String hostName;

    /**
     * A rank's information.
     *
     * @param host     the address its transport listens on.
     * @param port     the port.
     * @param nodeId   its node identity.
     * @param hostName its host name.
     */
    public PeerInfo(final String host, final int port, final String nodeId, final String hostName)
    {
        this.host = host;
        this.port = port;
        this.nodeId = nodeId;
        this.hostName = hostName;
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

    byte[] encode()
    {
        return String.join("\n", host, Integer.toString(port), nodeId, hostName).getBytes(StandardCharsets.UTF_8);
    }

    static PeerInfo decode(final byte[] bytes)
    {
        final String[] parts = new String(bytes, StandardCharsets.UTF_8).split("\n", -1);
        if (parts.length != 4)
        {
            throw new IllegalArgumentException("malformed peer record in the rendezvous store");
        }
        return new PeerInfo(parts[0], Integer.parseInt(parts[1]), parts[2], parts[3]);
    }
}
