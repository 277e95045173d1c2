package dev.hccl.transport.netty;

import dev.hccl.api.CommConfig;
import dev.hccl.api.spi.Transport;
import dev.hccl.api.spi.TransportContext;
import dev.hccl.api.spi.TransportProvider;

/**
 * The TCP transport as a plug-in: reaches every peer, on any node, so it is the one every pair falls back to.
 */
public final class TcpTransportProvider implements TransportProvider
{
    /** The preference of TCP: below the transports that only some pairs can use. */
    public static final int PREFERENCE = 100;

    /**
     * Public for {@link java.util.ServiceLoader}.
     */
    public TcpTransportProvider()
    {
    }

    @Override
    public String name()
    {
        return "tcp";
    }

    @Override
    public int preference()
    {
        return PREFERENCE;
    }

    /**
     * Listens on the chosen interface's address only, not the wildcard: the other ranks dial that address anyway, and
     * an interface that was excluded (a public one, a container bridge) should not carry the port at all.
     */
    @Override
    public Transport open(final TransportContext context)
    {
        final CommConfig config = context.config();
        return NettyTransport.bind(new TcpSettings()
            .rank(context.rank())
            .worldSize(context.worldSize())
            .jobToken(context.jobToken())
            .commId(context.commId())
            .bindAddress(context.bindAddress())
            .maxFrameBytes(config.maxFrameBytes())
            .ioThreads(config.ioThreads())
            .connectionsPerPeer(config.socketsPerPair())
            .threadsPerPeer(config.socketNthreads())
            .connectTimeout(config.connectTimeout())
            .inbound(context.inbound())
            .conclude());
    }
}
