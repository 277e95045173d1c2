package dev.hccl.core.bootstrap;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What each rank publishes at bootstrap: which node it is on, the interface chosen for it, the eager budget it grants
 * each peer, the CPUs its process may run on, and the address of each transport it opened, as that transport's opaque
 * bytes. Encoded as lines of text: the six fixed fields, then one {@code name=base64} line per transport.
 */
public final class PeerInfo
{
    private final String host;
    private final String nodeId;
    private final String hostName;
    private final String ifName;
    private final int eagerBudget;
    private final String cpus;
    private final Map<String, byte[]> transports;

    /**
     * A rank's information.
     *
     * @param host       the address of its chosen interface.
     * @param nodeId     its node identity.
     * @param hostName   its host name.
     * @param ifName     the name of the interface that {@code host} belongs to, or empty when unknown.
     * @param eagerBudget bytes each peer may send it eagerly ({@code HCCL_EAGER_BUDGET}).
     * @param cpus       the CPUs its process may run on, in Linux's list format, or empty when not known.
     * @param transports each opened transport's address, by the transport's name.
     */
    public PeerInfo(
        final String host,
        final String nodeId,
        final String hostName,
        final String ifName,
        final int eagerBudget,
        final String cpus,
        final Map<String, byte[]> transports)
    {
        this.eagerBudget = eagerBudget;
        this.cpus = cpus;
        this.host = host;
        this.nodeId = nodeId;
        this.hostName = hostName;
        this.ifName = ifName;
        this.transports = Collections.unmodifiableMap(new LinkedHashMap<>(transports));
    }

    /**
     * The address of the interface chosen for the rank.
     *
     * @return a literal address.
     */
    public String host()
    {
        return host;
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
     * The name of the interface chosen for the rank.
     *
     * @return the name, such as {@code eth0}, or empty when unknown.
     */
    public String ifName()
    {
        return ifName;
    }

    /**
     * The bytes each peer may send the rank eagerly, before its receives are posted.
     *
     * @return its {@code HCCL_EAGER_BUDGET}.
     */
    public int eagerBudget()
    {
        return eagerBudget;
    }

    /**
     * The CPUs the rank's process may run on, as its launcher's binding or its cpuset left them.
     *
     * @return them in Linux's list format ({@code 0-3,8}), or empty when not known.
     */
    public String cpus()
    {
        return cpus;
    }

    /**
     * The address a transport of the rank published.
     *
     * @param transport the transport's name.
     * @return its bytes, or null when the rank did not open that transport.
     */
    public byte[] address(final String transport)
    {
        final byte[] bytes = transports.get(transport);
        return bytes == null ? null : bytes.clone();
    }

    byte[] encode()
    {
        final StringBuilder text = new StringBuilder(String.join("\n", host, nodeId, hostName, ifName,
            Integer.toString(eagerBudget), cpus));
        final Base64.Encoder base64 = Base64.getEncoder();
        transports.forEach((name, bytes) -> text.append('\n').append(name).append('=')
            .append(base64.encodeToString(bytes)));
        return text.toString().getBytes(StandardCharsets.UTF_8);
    }

    static PeerInfo decode(final byte[] bytes)
    {
        final String[] parts = new String(bytes, StandardCharsets.UTF_8).split("\n", -1);
        if (parts.length < 6)
        {
            throw new IllegalArgumentException("malformed peer record in the rendezvous store");
        }
        final int eagerBudget;
        try
        {
            eagerBudget = Integer.parseInt(parts[4]);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("malformed eager budget in the rendezvous store");
        }
        final Map<String, byte[]> transports = new LinkedHashMap<>();
        for (int i = 6; i < parts.length; i++)
        {
            final int eq = parts[i].indexOf('=');
            if (eq <= 0)
            {
                throw new IllegalArgumentException("malformed transport address in the rendezvous store");
            }
            transports.put(parts[i].substring(0, eq), Base64.getDecoder().decode(parts[i].substring(eq + 1)));
        }
        return new PeerInfo(parts[0], parts[1], parts[2], parts[3], eagerBudget, parts[5], transports);
    }
}
