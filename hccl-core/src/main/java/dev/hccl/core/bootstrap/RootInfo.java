package dev.hccl.core.bootstrap;

import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The root-info string of {@code Hccl.getRootInfo()}: where rank 0's store listens and the job token, as
 * {@code hccl1:<port>:<token>:<host>}. Stores started for root infos in this process are kept here until rank 0's
 * own {@code init} adopts them.
 */
public final class RootInfo
{
    private static final String PREFIX = "hccl1:";
    private static final ConcurrentHashMap<Integer, StoreServer> STARTED = new ConcurrentHashMap<>();

    private final String host;
    private final int port;
    private final String token;

    /**
     * A root info.
     *
     * @param host  the store's host.
     * @param port  the store's port.
     * @param token the job token.
     */
    public RootInfo(final String host, final int port, final String token)
    {
        if (token.contains(":"))
        {
            throw new IllegalArgumentException("a job token for a root info must not contain ':'");
        }
        this.host = host;
        this.port = port;
        this.token = token;
    }

    /**
     * Parses a root-info string.
     *
     * @param text the string.
     * @return the root info.
     * @throws IllegalArgumentException when it is not one.
     */
    public static RootInfo parse(final String text)
    {
        final String[] parts = text == null ? new String[0] : text.split(":", 4);
        if (parts.length != 4 || !text.startsWith(PREFIX))
        {
            // Not the text itself: a root info holds the job token.
            throw new IllegalArgumentException("not an hccl root info (" + (text == null ? "null" : text.length() +
                " characters") + "; expected " + PREFIX + "<port>:<token>:<host>, as Hccl.getRootInfo() makes)");
        }
        try
        {
            return new RootInfo(parts[3], Integer.parseInt(parts[1]), parts[2]);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("bad port in root info: '" + parts[1] + "'");
        }
    }

    /**
     * Registers a store started for this root info, for rank 0's init to adopt.
     *
     * @param store the store.
     */
    public void registerStarted(final StoreServer store)
    {
        STARTED.put(port, store);
    }

    /**
     * Takes the store started for this root info in this process, if any.
     *
     * @return the store, or null when another process started it.
     */
    public StoreServer adoptStarted()
    {
        return STARTED.remove(port);
    }

    /**
     * The store's address.
     *
     * @return host and port.
     */
    public InetSocketAddress storeAddress()
    {
        return new InetSocketAddress(host, port);
    }

    /**
     * The job token.
     *
     * @return the token.
     */
    public String token()
    {
        return token;
    }

    /**
     * The store's port.
     *
     * @return the port.
     */
    public int port()
    {
        return port;
    }

    @Override
    public String toString()
    {
        return PREFIX + port + ":" + token + ":" + host;
    }
}
