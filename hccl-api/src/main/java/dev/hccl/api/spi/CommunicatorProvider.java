package dev.hccl.api.spi;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import javax.net.ssl.SSLContext;

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

    /**
     * Asks a running job's rank 0 for its status report, as {@code hccl-status} does.
     *
     * @param store   rank 0's store, as its INFO line at init names it.
     * @param token   the job's token.
     * @param tls     the job's TLS, or null for a job without.
     * @param timeout how long to try to reach the store.
     * @return the report, JSON; empty while rank 0's communicator is not made yet.
     * @throws HcclException when the store cannot be reached or refuses the token; {@link ErrorCode#E_ENV} from an
     *                       implementation that serves no status.
     */
    default Optional<String> jobStatus(
        final InetSocketAddress store, final String token, final SSLContext tls, final Duration timeout)
    {
        throw new HcclException(ErrorCode.E_ENV, getClass().getName() + " serves no job status");
    }
}
