package dev.hccl.api.spi;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;

import java.util.List;

/**
 * The implementation behind {@link dev.hccl.api.Hccl}, found with {@link java.util.ServiceLoader}.
 */
public interface CommunicatorProvider
{
    /**
     * Creates this process's communicator.
     *
     * @param config the resolved configuration.
     * @return the communicator.
     */
    Communicator init(CommConfig config);

    /**
     * Starts a rendezvous store and describes it.
     *
     * @param config the resolved configuration (addresses, token).
     * @return the root-info string.
     */
    String getRootInfo(CommConfig config);

    /**
     * Stops the store that {@link #getRootInfo} started in this process, when no init has taken it over.
     *
     * @param rootInfo the root-info string.
     * @return whether a store was stopped.
     */
    boolean releaseRootInfo(String rootInfo);

    /**
     * Creates all ranks of a communicator in this process, joined by the in-JVM transport.
     *
     * @param worldSize number of ranks.
     * @param config    shared settings.
     * @return the communicators, indexed by rank.
     */
    List<Communicator> initAll(int worldSize, CommConfig config);
}
