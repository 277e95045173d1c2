package dev.hccl.core;

import dev.hccl.api.spi.Link;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.Transport;
import dev.hccl.core.mailbox.Dispatcher;
import dev.hccl.core.topology.StaticTopology;

/**
 * What the communicators of one process share with the root communicator they were split from: the transport (one
 * link per peer), the dispatcher and the root topology. Reference-counted: the transport closes with the last
 * communicator.
 */
final class Fabric
{
    private final Transport transport;
    private final ProgressEngine progressEngine;
    private final Dispatcher dispatcher;
    private final StaticTopology topology;
    private final AutoCloseable onClose;
    private int references = 1;

    Fabric(
        final Transport transport,
        final Dispatcher dispatcher,
        final StaticTopology topology,
        final AutoCloseable onClose)
    {
        this.transport = transport;
        this.progressEngine = transport.progressEngine();
        this.dispatcher = dispatcher;
        this.topology = topology;
        this.onClose = onClose;
    }

    Link link(final int globalPeer)
    {
        return transport.link(globalPeer);
    }

    /**
     * The engine that waiting threads drive, or null when the transport has I/O threads of its own.
     */
    ProgressEngine progressEngine()
    {
        return progressEngine;
    }

    String transportName()
    {
        return transport.name();
    }

    Dispatcher dispatcher()
    {
        return dispatcher;
    }

    StaticTopology topology()
    {
        return topology;
    }

    synchronized void retain()
    {
        references++;
    }

    void release()
    {
        synchronized (this)
        {
            if (--references > 0)
            {
                return;
            }
        }
        transport.close();
        if (onClose != null)
        {
            try
            {
                onClose.close();
            }
            catch (final Exception ignore)
            {
                // nothing more to release
            }
        }
    }
}
