package dev.hccl.api;

import dev.hccl.api.spi.CommunicatorProvider;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

import javax.net.ssl.SSLContext;

/**
 * Entry point: creates communicators.
 * <pre>{@code
 * try (Communicator comm = Hccl.init())     // RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from the environment
 * {
 *     comm.allReduce(grads, grads, grads.remaining() / 4, DataType.FP32, ReduceOp.SUM);
 * }
 * }</pre>
 * The implementation is found with {@link ServiceLoader}; {@code hccl-core} provides it.
 */
public final class Hccl
{
    private Hccl()
    {
    }

    /**
     * Creates this process's communicator from the environment (torchrun's variables, or Open MPI's, PMI's,
     * Slurm's; {@code HCCL_ROOT_INFO}), waiting for every rank to arrive.
     *
     * @return the communicator.
     * @throws HcclException when ranks do not arrive within {@code HCCL_CONNECT_TIMEOUT}, or the set-up fails;
     *                       {@link ErrorCode#E_ENV} when no launcher variable gives the world size (a single rank is
     *                       asked for with {@code WORLD_SIZE=1}).
     * @throws IllegalArgumentException when the configuration is invalid.
     */
    public static Communicator init()
    {
        return init(CommConfig.builder().conclude());
    }

    /**
     * Creates this process's communicator.
     *
     * @param config the configuration.
     * @return the communicator.
     * @throws HcclException when ranks do not arrive within the connect timeout, or the set-up fails.
     */
    public static Communicator init(final CommConfig config)
    {
        return provider().init(config);
    }

    /**
     * Makes a root-info string, as {@code HcclGetRootInfo}: call it on rank 0, hand the string to every rank (rank 0
     * too), and have each call {@link #initRootInfo}. Starts rank 0's rendezvous store on an ephemeral port of the
     * address chosen from {@code HCCL_IF_IP} / {@code MASTER_ADDR}.
     *
     * @return an opaque string of printable characters.
     */
    public static String getRootInfo()
    {
        return getRootInfo(CommConfig.builder().conclude());
    }

    /**
     * As {@link #getRootInfo()}, with the address, job token, TLS and timeouts of {@code config}.
     *
     * @param config the configuration: its {@code HCCL_IF_IP}, else {@code MASTER_ADDR}, is the address the store
     *               serves and the string names; its job token, when set, is the job's.
     * @return an opaque string of printable characters.
     */
    public static String getRootInfo(final CommConfig config)
    {
        return provider().getRootInfo(config);
    }

    /**
     * Stops the rendezvous store that {@link #getRootInfo()} started in this process, for a rank 0 that will not call
     * {@link #initRootInfo} after all (the job was given up before it could): otherwise the store serves until the
     * process ends. Does nothing once rank 0's init has taken the store over.
     *
     * @param rootInfo the string from {@link #getRootInfo()}.
     * @return whether a store was stopped.
     * @throws IllegalArgumentException when the string is not a root info.
     */
    public static boolean releaseRootInfo(final String rootInfo)
    {
        return provider().releaseRootInfo(rootInfo);
    }

    /**
     * Joins the job that {@link #getRootInfo()} created, as {@code HcclCommInitRootInfo}.
     *
     * @param rootInfo  the string from rank 0.
     * @param rank      this process's rank.
     * @param worldSize number of ranks.
     * @return the communicator.
     * @throws HcclException when ranks do not arrive within the connect timeout, or the set-up fails.
     */
    public static Communicator initRootInfo(final String rootInfo, final int rank, final int worldSize)
    {
        return init(CommConfig.builder().rootInfo(rootInfo).rank(rank).worldSize(worldSize).conclude());
    }

    /**
     * Creates {@code worldSize} communicators in this process, one per rank, joined by the in-JVM transport, as
     * {@code ncclCommInitAll}. Use each from its own thread, since blocking calls wait for the other ranks.
     *
     * @param worldSize number of ranks, at least 1.
     * @return the communicators, indexed by rank.
     */
    public static List<Communicator> initAll(final int worldSize)
    {
        return initAll(worldSize, CommConfig.builder().environment(java.util.Map.of()).worldSize(worldSize).conclude());
    }

    /**
     * As {@link #initAll(int)}, with the timeouts, segment size and other settings of {@code config} (its rank is
     * ignored).
     *
     * @param worldSize number of ranks, at least 1.
     * @param config    settings shared by the communicators.
     * @return the communicators, indexed by rank.
     */
    public static List<Communicator> initAll(final int worldSize, final CommConfig config)
    {
        if (worldSize < 1)
        {
            throw new IllegalArgumentException("worldSize must be at least 1, got " + worldSize);
        }
        return provider().initAll(worldSize, config);
    }

    /**
     * Asks a running job where every rank is, as {@code hccl-status} does: rank 0 answers on its store's port (the
     * address its INFO line at init names) with a JSON report of each rank's link and each communicator's operations,
     * naming the rank that is behind. Only a job with a token serves it, and only to a caller with the token.
     *
     * @param store   rank 0's store.
     * @param token   the job's token ({@code HCCL_JOB_TOKEN}).
     * @param tls     the job's TLS when it runs with {@code HCCL_TLS_*} (a client certificate of its CA), else null.
     * @param timeout how long to try to reach the store.
     * @return the report; empty while rank 0's communicator is not made yet.
     * @throws HcclException when the store cannot be reached in time or refuses the token.
     */
    public static Optional<String> jobStatus(
        final InetSocketAddress store, final String token, final SSLContext tls, final Duration timeout)
    {
        return provider().jobStatus(store, token, tls, timeout);
    }

    private static CommunicatorProvider provider()
    {
        CommunicatorProvider found = provider;
        if (found == null)
        {
            try
            {
                found = ServiceLoader.load(CommunicatorProvider.class).findFirst().orElseThrow(() ->
                    new HcclException(ErrorCode.E_ENV, "no hccl-java implementation on the " + path() +
                        ": add the dev.hccl:hccl-core dependency"));
            }
            catch (final ServiceConfigurationError | LinkageError ex)
            {
                // On the module path, automatic modules declare no dependencies: a JVM told to resolve only the
                // application's modules leaves Netty and SLF4J out, and the provider cannot load.
                throw new HcclException(ErrorCode.E_ENV, "hccl-java's implementation could not be loaded (" + ex +
                    (Hccl.class.getModule().isNamed() ? "): on the module path, add '--add-modules ALL-MODULE-PATH' " +
                    "to the java command (hccl-java's jars are automatic modules, which declare no dependencies, so " +
                    "Netty and SLF4J are resolved only when named)" : "): check that hccl-core's dependencies " +
                    "(Netty, Agrona, the SLF4J API) are on the class path"), ex);
            }
            provider = found;
        }
        return found;
    }

    private static String path()
    {
        return Hccl.class.getModule().isNamed() ? "module path" : "class path";
    }

    /** Found once; racing threads find the same provider. */
    private static volatile CommunicatorProvider provider;
}
