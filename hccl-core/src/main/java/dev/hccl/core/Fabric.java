package dev.hccl.core;

import dev.hccl.algorithms.LinkCosts;
import dev.hccl.api.spi.Link;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.TransportKind;
import dev.hccl.core.mailbox.Dispatcher;
import dev.hccl.core.op.RankNumbering;
import dev.hccl.core.topology.StaticTopology;
import dev.hccl.core.transport.TransportRouting;

import dev.hccl.core.watch.CommView;

import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.IntFunction;

/**
 * What the communicators of one process share with the root communicator they were split from: the transports (one
 * link per peer, each through the transport chosen for the pair), the dispatcher and the root topology.
 * Reference-counted: the transports close with the last communicator.
 */
final class Fabric
{
    private final TransportRouting transports;
    private final ProgressEngine progressEngine;
    private final Dispatcher dispatcher;
    private final StaticTopology topology;
    private final AutoCloseable onClose;
    private final LinkCosts defaultCosts;
    private int references = 1;
    /** The open communicators split or shrunk from the root, in the order they were made, for hccl-status. */
    private final Set<CommView> children = Collections.synchronizedSet(new LinkedHashSet<>());

    Fabric(
        final TransportRouting transports,
        final Dispatcher dispatcher,
        final StaticTopology topology,
        final LinkCosts defaultCosts,
        final AutoCloseable onClose)
    {
        this.defaultCosts = defaultCosts;
        this.transports = transports;
        this.progressEngine = transports.progressEngine();
        this.dispatcher = dispatcher;
        this.topology = topology;
        this.onClose = onClose;
        dispatcher.flow().useLinks(transports::link);
    }

    /**
     * @param numbering a communicator's ranks in the root communicator.
     * @return the link to each rank of that communicator, by its rank there.
     */
    IntFunction<Link> links(final RankNumbering numbering)
    {
        return peer -> transports.link(numbering.global(peer));
    }

    /**
     * The engine that waiting threads drive (every transport in use that has one), or null when the transports have
     * I/O threads of their own.
     */
    ProgressEngine progressEngine()
    {
        return progressEngine;
    }

    /**
     * The memory the ranks of this node share, for the root communicator alone.
     *
     * @return the arena, its ranks being the root communicator's; null when there is none.
     */
    NodeArena nodeArena()
    {
        return transports.nodeArena();
    }

    /** Whether every peer is a thread of this process, whose messages arrive before their send returns. */
    boolean inProcess()
    {
        return transports.inProcess();
    }

    /** The transports in use, such as {@code shm+tcp/epoll}. */
    String transportName()
    {
        return transports.names();
    }

    /** The transport that serves a peer of the root communicator, such as {@code shm}. */
    String transportTo(final int globalPeer)
    {
        return transports.transportTo(globalPeer);
    }

    /** What the transport that serves a peer of the root communicator is. */
    TransportKind transportKindTo(final int globalPeer)
    {
        return transports.kindTo(globalPeer);
    }

    /**
     * The link figures the cost model starts from: the same on every rank, as they decide the algorithms.
     */
    LinkCosts defaultCosts()
    {
        return defaultCosts;
    }

    Dispatcher dispatcher()
    {
        return dispatcher;
    }

    StaticTopology topology()
    {
        return topology;
    }

    /**
     * A communicator split or shrunk from the root is made.
     *
     * @param child the communicator.
     */
    void opened(final CommView child)
    {
        children.add(child);
    }

    /**
     * A communicator closes.
     *
     * @param comm the communicator; one not {@link #opened} is ignored.
     */
    void closed(final CommView comm)
    {
        children.remove(comm);
    }

    /**
     * @return the open communicators split or shrunk from the root, oldest first.
     */
    List<CommView> children()
    {
        synchronized (children)
        {
            return List.copyOf(children);
        }
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
        transports.close();
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
