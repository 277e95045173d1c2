package dev.hccl.api;

import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The configuration of a communicator: built with {@link #builder()}, resolved and validated once in
 * {@link Builder#conclude()}.
 * <p>
 * Precedence: a value set on the builder, then the environment variable, then the default. Names follow HCCL where
 * HCCL has one, and torchrun for the rendezvous; the rank and world size are also read from Open MPI, PMI and Slurm
 * variables when torchrun's are absent. Every constant {@code FOO_ENV} names the variable, {@code FOO_DEFAULT} its
 * default.
 */
public final class CommConfig
{
    /** Address of rank 0's rendezvous store. */
    public static final String MASTER_ADDR_ENV = "MASTER_ADDR";
    /** Default of {@link #MASTER_ADDR_ENV}. */
    public static final String MASTER_ADDR_DEFAULT = "127.0.0.1";
    /** Port of rank 0's rendezvous store. */
    public static final String MASTER_PORT_ENV = "MASTER_PORT";
    /** Default of {@link #MASTER_PORT_ENV}, torchrun's. */
    public static final int MASTER_PORT_DEFAULT = 29500;
    /** This process's rank. */
    public static final String RANK_ENV = "RANK";
    /** Number of ranks. */
    public static final String WORLD_SIZE_ENV = "WORLD_SIZE";
    /** Rank within the node; derived from host identity when absent. */
    public static final String LOCAL_RANK_ENV = "LOCAL_RANK";
    /** Ranks on this node; derived from host identity when absent. */
    public static final String LOCAL_WORLD_SIZE_ENV = "LOCAL_WORLD_SIZE";
    /** Root-info string from {@code Hccl.getRootInfo()}, as an alternative to MASTER_ADDR/MASTER_PORT. */
    public static final String ROOT_INFO_ENV = "HCCL_ROOT_INFO";
    /** Seconds to wait for every rank to arrive and connect. */
    public static final String CONNECT_TIMEOUT_ENV = "HCCL_CONNECT_TIMEOUT";
    /** Default of {@link #CONNECT_TIMEOUT_ENV}: 120 s, as HCCL. */
    public static final Duration CONNECT_TIMEOUT_DEFAULT = Duration.ofSeconds(120);
    /** Seconds any wait of an operation may last before the operation fails. */
    public static final String EXEC_TIMEOUT_ENV = "HCCL_EXEC_TIMEOUT";
    /** Default of {@link #EXEC_TIMEOUT_ENV}: 1836 s, as HCCL. */
    public static final Duration EXEC_TIMEOUT_DEFAULT = Duration.ofSeconds(1836);
    /** Largest frame payload accepted from a peer, in MiB; longer frames are protocol errors. */
    public static final String BUFFSIZE_ENV = "HCCL_BUFFSIZE";
    /** Default of {@link #BUFFSIZE_ENV}: 200 MiB, as HCCL. */
    public static final int BUFFSIZE_DEFAULT_MB = 200;
    /** Bytes per pipelined segment: large messages are cut into segments so that send, receive and reduce overlap. */
    public static final String SEGMENT_SIZE_ENV = "HCCL_SEGMENT_SIZE";
    /** Default of {@link #SEGMENT_SIZE_ENV}: 512 KiB. */
    public static final int SEGMENT_SIZE_DEFAULT = 512 * 1024;
    /**
     * Algorithm override: a bare name ({@code ring}: that algorithm for every operation it implements, over all
     * ranks, automatic for the rest), per level ({@code level0:NA;level1:ring}: level0 decides on one node; across
     * nodes the levels compose as in HCCL, the hierarchical schedule with the level1 algorithm between nodes), or per
     * operation ({@code allreduce=level0:NA;level1:H-D_R/allgather=ring}). {@code NA} is the automatic choice. An
     * unknown name fails {@code Hccl.init} with the list of valid ones; {@code docs/ALGORITHMS.md} lists them.
     */
    public static final String ALGO_ENV = "HCCL_ALGO";
    /** Whether results must be bitwise reproducible. */
    public static final String DETERMINISTIC_ENV = "HCCL_DETERMINISTIC";
    /**
     * Whether the communicator measures its links at creation for the cost model ({@link TopoProbe}): {@code 0} (the
     * default) never, {@code auto} when it spans more than one node, {@code 1} always. The measurement takes one pair
     * of ranks within a node and one across nodes, 60 round trips and 4 transfers of 1 MiB each. Off by default: at
     * creation, with the JIT still cold, it took 0.3-0.5 s on the 2-vCPU VM of docs/PERFORMANCE.md (2 nodes of 2 and
     * 4 ranks, 1 Gbit/s between them), where the defaults cost nothing. Ignored under {@link #DETERMINISTIC_ENV},
     * whose choices never depend on a measurement.
     */
    public static final String TOPO_PROBE_ENV = "HCCL_TOPO_PROBE";
    /**
     * The network interface this rank listens on and advertises, in NCCL's {@code NCCL_SOCKET_IFNAME} grammar: a
     * comma-separated list of name prefixes ({@code eth,ib}), {@code ^} in front to exclude instead
     * ({@code ^docker,lo}), {@code =} in front for exact names ({@code =eth0,eth1}). When it matches no interface
     * that is up with an address, {@code Hccl.init} fails on that rank listing the interfaces. When unset, loopback
     * and {@code docker*}, {@code br-*}, {@code virbr*}, {@code veth*} interfaces are skipped unless nothing else is
     * up, and among several the one that routes to rank 0 wins, then IPv4 before IPv6, then the first by name. The
     * choice and its reason are logged at INFO. {@link #IF_IP_ENV} wins over it.
     */
    public static final String SOCKET_IFNAME_ENV = "HCCL_SOCKET_IFNAME";
    /**
     * The address this rank listens on and advertises; it must be an address of an interface that is up, else
     * {@code Hccl.init} fails listing the interfaces. Wins over {@link #SOCKET_IFNAME_ENV}, as in HCCL.
     */
    public static final String IF_IP_ENV = "HCCL_IF_IP";
    /** Shared secret every connection presents; rank 0 makes one when unset. */
    public static final String JOB_TOKEN_ENV = "HCCL_JOB_TOKEN";
    /** Overrides the node identity (host name + boot id + network namespace). */
    public static final String NODE_ID_ENV = "HCCL_NODE_ID";
    /**
     * Netty I/O threads per process; 0 has none, the thread that waits for a transfer performing the I/O (lowest
     * latency), more lets the I/O of many peers use more cores.
     */
    public static final String IO_THREADS_ENV = "HCCL_IO_THREADS";
    /** Default of {@link #IO_THREADS_ENV}: the waiting thread performs the I/O. */
    public static final int IO_THREADS_DEFAULT = 0;
    /**
     * The directory where ranks of one node create the shared-memory segments they exchange data through (a
     * tmpfs); each segment is removed from it as soon as both ranks of its pair have mapped it.
     */
    public static final String SHM_DIR_ENV = "HCCL_SHM_DIR";
    /** Default of {@link #SHM_DIR_ENV}. */
    public static final String SHM_DIR_DEFAULT = "/dev/shm";
    /** {@code 1} turns the shared-memory transport off: ranks of one node then talk over TCP (NCCL_SHM_DISABLE). */
    public static final String SHM_DISABLE_ENV = "HCCL_SHM_DISABLE";

    /**
     * TCP connections per pair of ranks and I/O thread (NCCL's {@code NCCL_NSOCKS_PERTHREAD}): a pair has
     * {@code HCCL_SOCKET_NSOCKS x HCCL_SOCKET_NTHREADS} connections, and the segments of a large transfer travel over
     * them side by side. Every rank must use the same values.
     */
    public static final String SOCKET_NSOCKS_ENV = "HCCL_SOCKET_NSOCKS";
    /**
     * I/O threads that one pair's TCP connections are spread over (NCCL's {@code NCCL_SOCKET_NTHREADS}); more than 1
     * needs at least as many {@link #IO_THREADS_ENV}.
     */
    public static final String SOCKET_NTHREADS_ENV = "HCCL_SOCKET_NTHREADS";
    /** The most TCP connections per pair ({@link #SOCKET_NSOCKS_ENV} x {@link #SOCKET_NTHREADS_ENV}). */
    public static final int SOCKETS_PER_PAIR_MAX = 16;

    /** Value of {@link #localRank()} and {@link #localSize()} when they are to be derived from host identity. */
    public static final int DERIVE = -1;

    private static final String[][] LOCAL_FALLBACKS = {
        {LOCAL_RANK_ENV, "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"},
        {LOCAL_WORLD_SIZE_ENV, "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"},
    };

    private final int rank;
    private final int worldSize;
    private final int localRank;
    private final int localSize;
    private final String masterAddr;
    private final int masterPort;
    private final String rootInfo;
    private final Duration connectTimeout;
    private final Duration execTimeout;
    private final int maxFrameBytes;
    private final int segmentBytes;
    private final String algo;
    private final boolean deterministic;
    private final TopoProbe topoProbe;
    private final String socketIfname;
    private final String ifIp;
    private final String jobToken;
    private final String nodeId;
    private final int ioThreads;
    private final String shmDir;
    private final boolean shmDisable;
    private final int socketNsocks;
    private final int socketNthreads;
    private final Map<String, String> sources;
    private final Set<String> given;

    private CommConfig(final Builder b, final Map<String, String> sources)
    {
        given = Set.copyOf(b.given);
        rank = b.rank;
        worldSize = b.worldSize;
        localRank = b.localRank;
        localSize = b.localSize;
        masterAddr = b.masterAddr;
        masterPort = b.masterPort;
        rootInfo = b.rootInfo;
        connectTimeout = b.connectTimeout;
        execTimeout = b.execTimeout;
        maxFrameBytes = b.maxFrameBytes;
        segmentBytes = b.segmentBytes;
        algo = b.algo;
        deterministic = b.deterministic;
        topoProbe = b.topoProbe;
        socketIfname = b.socketIfname;
        ifIp = b.ifIp;
        jobToken = b.jobToken;
        nodeId = b.nodeId;
        ioThreads = b.ioThreads;
        shmDir = b.shmDir;
        shmDisable = b.shmDisable;
        socketNsocks = b.socketNsocks;
        socketNthreads = b.socketNthreads;
        this.sources = sources;
    }

    /**
     * A new builder that reads the process environment for anything not set on it.
     *
     * @return the builder.
     */
    public static Builder builder()
    {
        return new Builder();
    }

    /**
     * This process's rank.
     *
     * @return the rank.
     */
    public int rank()
    {
        return rank;
    }

    /**
     * Number of ranks.
     *
     * @return the world size.
     */
    public int worldSize()
    {
        return worldSize;
    }

    /**
     * Rank within the node.
     *
     * @return the local rank, or {@link #DERIVE}.
     */
    public int localRank()
    {
        return localRank;
    }

    /**
     * Ranks on this node.
     *
     * @return the local size, or {@link #DERIVE}.
     */
    public int localSize()
    {
        return localSize;
    }

    /**
     * Host of rank 0's rendezvous store.
     *
     * @return the address.
     */
    public String masterAddr()
    {
        return masterAddr;
    }

    /**
     * Port of rank 0's rendezvous store.
     *
     * @return the port.
     */
    public int masterPort()
    {
        return masterPort;
    }

    /**
     * Root-info string to join with, in place of the master address and port.
     *
     * @return the root info, or null.
     */
    public String rootInfo()
    {
        return rootInfo;
    }

    /**
     * How long ranks wait for each other at creation.
     *
     * @return the connect timeout.
     */
    public Duration connectTimeout()
    {
        return connectTimeout;
    }

    /**
     * How long any wait inside an operation may last.
     *
     * @return the execution timeout.
     */
    public Duration execTimeout()
    {
        return execTimeout;
    }

    /**
     * Largest frame payload accepted from a peer.
     *
     * @return bytes.
     */
    public int maxFrameBytes()
    {
        return maxFrameBytes;
    }

    /**
     * Bytes per pipelined segment.
     *
     * @return bytes.
     */
    public int segmentBytes()
    {
        return segmentBytes;
    }

    /**
     * The algorithm override, in HCCL's grammar.
     *
     * @return the override, or null for automatic choice.
     */
    public String algo()
    {
        return algo;
    }

    /**
     * Whether results must be bitwise reproducible.
     *
     * @return true when deterministic.
     */
    public boolean deterministic()
    {
        return deterministic;
    }

    /**
     * Whether the links are measured at creation.
     *
     * @return the setting; {@link TopoProbe#AUTO} unless set.
     */
    public TopoProbe topoProbe()
    {
        return topoProbe;
    }

    /**
     * Interface selection, in HCCL_SOCKET_IFNAME's grammar.
     *
     * @return the selection, or null.
     */
    public String socketIfname()
    {
        return socketIfname;
    }

    /**
     * The address to listen on and advertise.
     *
     * @return the address, or null to choose one.
     */
    public String ifIp()
    {
        return ifIp;
    }

    /**
     * The shared secret connections present.
     *
     * @return the token, or null to take rank 0's.
     */
    public String jobToken()
    {
        return jobToken;
    }

    /**
     * The node identity override.
     *
     * @return the override, or null to use host name + boot id + network namespace.
     */
    public String nodeId()
    {
        return nodeId;
    }

    /**
     * Netty I/O threads.
     *
     * @return 0 (the waiting thread performs the I/O) to 64.
     */
    public int ioThreads()
    {
        return ioThreads;
    }

    /**
     * Where shared-memory segments are created ({@link #SHM_DIR_ENV}).
     *
     * @return the directory.
     */
    public String shmDir()
    {
        return shmDir;
    }

    /**
     * Whether the shared-memory transport is off ({@link #SHM_DISABLE_ENV}).
     *
     * @return true when ranks of one node must talk over TCP.
     */
    public boolean shmDisable()
    {
        return shmDisable;
    }

    /**
     * TCP connections per pair and I/O thread ({@link #SOCKET_NSOCKS_ENV}).
     *
     * @return at least 1.
     */
    public int socketNsocks()
    {
        return socketNsocks;
    }

    /**
     * I/O threads one pair's TCP connections are spread over ({@link #SOCKET_NTHREADS_ENV}).
     *
     * @return at least 1.
     */
    public int socketNthreads()
    {
        return socketNthreads;
    }

    /**
     * TCP connections per pair of ranks: {@link #socketNsocks()} x {@link #socketNthreads()}.
     *
     * @return 1 to {@link #SOCKETS_PER_PAIR_MAX}.
     */
    public int socketsPerPair()
    {
        return socketNsocks * socketNthreads;
    }

    /**
     * Every resolved value with where it came from, for logging once at creation.
     *
     * @return name = value (source), in a stable order.
     */
    public Map<String, String> describe()
    {
        return sources;
    }

    /**
     * Whether a setting was given, on the builder or in the environment, rather than left to its default.
     *
     * @param setting the setting's variable, such as {@link #WORLD_SIZE_ENV} (given too by another launcher's
     *                variable for it, such as {@code OMPI_COMM_WORLD_SIZE}).
     * @return true when given.
     */
    public boolean given(final String setting)
    {
        return given.contains(setting);
    }

    /**
     * Every launcher variable that gives the rank and world size, for messages.
     *
     * @return the pairs, such as {@code RANK/WORLD_SIZE, OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE, ...}.
     */
    public static String launcherVariables()
    {
        return LaunchEnvironment.looked();
    }

    @Override
    public String toString()
    {
        return "CommConfig" + sources;
    }

    /**
     * Collects explicit values; {@link #conclude()} fills the rest from the environment and defaults, then
     * validates.
     */
    public static final class Builder
    {
        private Map<String, String> env = System.getenv();
        private final Set<String> given = new HashSet<>();
        private Integer explicitRank;
        private Integer explicitWorldSize;
        private Integer explicitLocalRank;
        private Integer explicitLocalSize;
        private String explicitMasterAddr;
        private Integer explicitMasterPort;
        private String explicitRootInfo;
        private Duration explicitConnectTimeout;
        private Duration explicitExecTimeout;
        private Integer explicitMaxFrameBytes;
        private Integer explicitSegmentBytes;
        private String explicitAlgo;
        private Boolean explicitDeterministic;
        private TopoProbe explicitTopoProbe;
        private String explicitSocketIfname;
        private String explicitIfIp;
        private String explicitJobToken;
        private String explicitNodeId;
        private Integer explicitIoThreads;
        private Integer explicitSocketNsocks;
        private Integer explicitSocketNthreads;
        private String explicitShmDir;
        private Boolean explicitShmDisable;

        private int rank;
        private int worldSize;
        private int localRank;
        private int localSize;
        private String masterAddr;
        private int masterPort;
        private String rootInfo;
        private Duration connectTimeout;
        private Duration execTimeout;
        private int maxFrameBytes;
        private int segmentBytes;
        private String algo;
        private boolean deterministic;
        private TopoProbe topoProbe;
        private String socketIfname;
        private String ifIp;
        private String jobToken;
        private String nodeId;
        private int ioThreads;
        private String shmDir;
        private boolean shmDisable;
        private int socketNsocks;
        private int socketNthreads;

        private Builder()
        {
        }

        /**
         * Reads variables from this map instead of the process environment (for tests and embedding).
         *
         * @param env the variables.
         * @return this.
         */
        public Builder environment(final Map<String, String> env)
        {
            this.env = Objects.requireNonNull(env, "env");
            return this;
        }

        /**
         * This process's rank.
         *
         * @param rank 0 to worldSize - 1.
         * @return this.
         */
        public Builder rank(final int rank)
        {
            explicitRank = rank;
            return this;
        }

        /**
         * Number of ranks.
         *
         * @param worldSize at least 1.
         * @return this.
         */
        public Builder worldSize(final int worldSize)
        {
            explicitWorldSize = worldSize;
            return this;
        }

        /**
         * Rank within the node, overriding what host identity says.
         *
         * @param localRank the local rank.
         * @return this.
         */
        public Builder localRank(final int localRank)
        {
            explicitLocalRank = localRank;
            return this;
        }

        /**
         * Ranks on this node, overriding what host identity says.
         *
         * @param localSize the local size.
         * @return this.
         */
        public Builder localSize(final int localSize)
        {
            explicitLocalSize = localSize;
            return this;
        }

        /**
         * Host of rank 0's rendezvous store.
         *
         * @param masterAddr host name or address.
         * @return this.
         */
        public Builder masterAddr(final String masterAddr)
        {
            explicitMasterAddr = masterAddr;
            return this;
        }

        /**
         * Port of rank 0's rendezvous store.
         *
         * @param masterPort 1 to 65535, or 0 to let rank 0 choose (useful with root info only).
         * @return this.
         */
        public Builder masterPort(final int masterPort)
        {
            explicitMasterPort = masterPort;
            return this;
        }

        /**
         * Joins the job that {@code Hccl.getRootInfo()} created.
         *
         * @param rootInfo the string rank 0 handed out.
         * @return this.
         */
        public Builder rootInfo(final String rootInfo)
        {
            explicitRootInfo = rootInfo;
            return this;
        }

        /**
         * How long ranks wait for each other at creation.
         *
         * @param timeout positive.
         * @return this.
         */
        public Builder connectTimeout(final Duration timeout)
        {
            explicitConnectTimeout = timeout;
            return this;
        }

        /**
         * How long any wait inside an operation may last.
         *
         * @param timeout positive.
         * @return this.
         */
        public Builder execTimeout(final Duration timeout)
        {
            explicitExecTimeout = timeout;
            return this;
        }

        /**
         * Largest frame payload accepted from a peer.
         *
         * @param bytes at least the segment size.
         * @return this.
         */
        public Builder maxFrameBytes(final int bytes)
        {
            explicitMaxFrameBytes = bytes;
            return this;
        }

        /**
         * Bytes per pipelined segment.
         *
         * @param bytes 1 KiB to 64 MiB, a multiple of 8.
         * @return this.
         */
        public Builder segmentBytes(final int bytes)
        {
            explicitSegmentBytes = bytes;
            return this;
        }

        /**
         * Algorithm override, in the grammar of {@link #ALGO_ENV}.
         *
         * @param algo the override, or null for automatic.
         * @return this.
         */
        public Builder algo(final String algo)
        {
            explicitAlgo = algo;
            return this;
        }

        /**
         * Whether results must be bitwise reproducible.
         *
         * @param deterministic true for deterministic mode.
         * @return this.
         */
        public Builder deterministic(final boolean deterministic)
        {
            explicitDeterministic = deterministic;
            return this;
        }

        /**
         * Whether the links are measured at creation ({@link #TOPO_PROBE_ENV}).
         *
         * @param topoProbe the setting.
         * @return this.
         */
        public Builder topoProbe(final TopoProbe topoProbe)
        {
            explicitTopoProbe = topoProbe;
            return this;
        }

        /**
         * Interface selection, in HCCL_SOCKET_IFNAME's grammar.
         *
         * @param socketIfname the selection.
         * @return this.
         */
        public Builder socketIfname(final String socketIfname)
        {
            explicitSocketIfname = socketIfname;
            return this;
        }

        /**
         * The address to listen on and advertise.
         *
         * @param ifIp an address of this host.
         * @return this.
         */
        public Builder ifIp(final String ifIp)
        {
            explicitIfIp = ifIp;
            return this;
        }

        /**
         * The shared secret connections present.
         *
         * @param jobToken any non-empty string.
         * @return this.
         */
        public Builder jobToken(final String jobToken)
        {
            explicitJobToken = jobToken;
            return this;
        }

        /**
         * Overrides the node identity.
         *
         * @param nodeId any non-empty string; ranks that give the same one share a node.
         * @return this.
         */
        public Builder nodeId(final String nodeId)
        {
            explicitNodeId = nodeId;
            return this;
        }

        /**
         * Netty I/O threads per process: 0 (the waiting thread performs the I/O) to 64.
         *
         * @param threads how many.
         * @return this.
         */
        public Builder ioThreads(final int threads)
        {
            explicitIoThreads = threads;
            return this;
        }

        /**
         * TCP connections per pair of ranks and I/O thread ({@link #SOCKET_NSOCKS_ENV}).
         *
         * @param sockets at least 1.
         * @return this.
         */
        public Builder socketNsocks(final int sockets)
        {
            explicitSocketNsocks = sockets;
            return this;
        }

        /**
         * I/O threads one pair's TCP connections are spread over ({@link #SOCKET_NTHREADS_ENV}).
         *
         * @param threads at least 1, at most {@link #ioThreads(int)} when above 1.
         * @return this.
         */
        public Builder socketNthreads(final int threads)
        {
            explicitSocketNthreads = threads;
            return this;
        }

        /**
         * Where shared-memory segments are created.
         *
         * @param dir a directory on a tmpfs, such as {@code /dev/shm}.
         * @return this.
         */
        public Builder shmDir(final String dir)
        {
            explicitShmDir = dir;
            return this;
        }

        /**
         * Turns the shared-memory transport off or on.
         *
         * @param disable true to have ranks of one node talk over TCP.
         * @return this.
         */
        public Builder shmDisable(final boolean disable)
        {
            explicitShmDisable = disable;
            return this;
        }

        /**
         * Resolves every value (builder, then environment, then default) and validates the whole.
         *
         * @return the configuration.
         * @throws IllegalArgumentException naming the setting and its source when a value is invalid.
         * @throws HcclException            {@link ErrorCode#E_ENV} when a launcher's pair of variables is half set
         *                                  ({@code RANK} without {@code WORLD_SIZE}, say), naming the one missing.
         */
        public CommConfig conclude()
        {
            final Map<String, String> sources = new LinkedHashMap<>();
            given.clear();
            final LaunchEnvironment launch = LaunchEnvironment.read(env);
            rank = intValue(sources, explicitRank, launch == null ? new String[]{RANK_ENV} :
                new String[]{RANK_ENV, launch.rankVariable}, 0);
            worldSize = intValue(sources, explicitWorldSize, launch == null || launch.sizeVariable == null ?
                new String[]{WORLD_SIZE_ENV} : new String[]{WORLD_SIZE_ENV, launch.sizeVariable}, 1);
            final String launchProblem = launch == null ? null :
                launch.problem(explicitRank != null, explicitWorldSize != null);
            if (launchProblem != null)
            {
                throw new HcclException(ErrorCode.E_ENV, launchProblem);
            }
            localRank = intValue(sources, explicitLocalRank, LOCAL_FALLBACKS[0], DERIVE);
            localSize = intValue(sources, explicitLocalSize, LOCAL_FALLBACKS[1], DERIVE);
            masterAddr = stringValue(sources, explicitMasterAddr, MASTER_ADDR_ENV, MASTER_ADDR_DEFAULT);
            masterPort = intValue(sources, explicitMasterPort, new String[]{MASTER_PORT_ENV}, MASTER_PORT_DEFAULT);
            rootInfo = stringValue(sources, explicitRootInfo, ROOT_INFO_ENV, null);
            connectTimeout = durationValue(sources, explicitConnectTimeout, CONNECT_TIMEOUT_ENV, CONNECT_TIMEOUT_DEFAULT);
            execTimeout = durationValue(sources, explicitExecTimeout, EXEC_TIMEOUT_ENV, EXEC_TIMEOUT_DEFAULT);
            final Integer frameMb = parseInt(BUFFSIZE_ENV, env.get(BUFFSIZE_ENV));
            if (explicitMaxFrameBytes != null)
            {
                maxFrameBytes = explicitMaxFrameBytes;
                sources.put("maxFrameBytes", maxFrameBytes + " (config)");
            }
            else
            {
                final int mb = frameMb != null ? frameMb : BUFFSIZE_DEFAULT_MB;
                require(mb >= 1 && mb <= 2047, BUFFSIZE_ENV + " must be 1 to 2047 (MiB), got " + mb);
                maxFrameBytes = mb * 1024 * 1024;
                sources.put(BUFFSIZE_ENV, mb + " MiB (" + (frameMb != null ? "env" : "default") + ")");
            }
            segmentBytes = intValue(sources, explicitSegmentBytes, new String[]{SEGMENT_SIZE_ENV}, SEGMENT_SIZE_DEFAULT);
            algo = stringValue(sources, explicitAlgo, ALGO_ENV, null);
            final String det = stringValue(sources, explicitDeterministic == null ? null :
                explicitDeterministic.toString(), DETERMINISTIC_ENV, "false");
            require("true".equalsIgnoreCase(det) || "false".equalsIgnoreCase(det),
                DETERMINISTIC_ENV + " must be true or false, got '" + det + "'");
            deterministic = Boolean.parseBoolean(det);
            final String probe = stringValue(sources, explicitTopoProbe == null ? null :
                explicitTopoProbe.name().toLowerCase(java.util.Locale.ROOT), TOPO_PROBE_ENV, "0");
            topoProbe = TopoProbe.parse(probe);
            socketIfname = stringValue(sources, explicitSocketIfname, SOCKET_IFNAME_ENV, null);
            ifIp = stringValue(sources, explicitIfIp, IF_IP_ENV, null);
            jobToken = explicitJobToken != null ? explicitJobToken : emptyToNull(env.get(JOB_TOKEN_ENV));
            sources.put(JOB_TOKEN_ENV, jobToken == null ? "<from rank 0>" : "<set>");
            nodeId = stringValue(sources, explicitNodeId, NODE_ID_ENV, null);
            ioThreads = intValue(sources, explicitIoThreads, new String[]{IO_THREADS_ENV}, IO_THREADS_DEFAULT);
            shmDir = stringValue(sources, explicitShmDir, SHM_DIR_ENV, SHM_DIR_DEFAULT);
            shmDisable = flagValue(sources, explicitShmDisable, SHM_DISABLE_ENV);
            socketNsocks = intValue(sources, explicitSocketNsocks, new String[]{SOCKET_NSOCKS_ENV}, 1);
            socketNthreads = intValue(sources, explicitSocketNthreads, new String[]{SOCKET_NTHREADS_ENV}, 1);
            validate();
            return new CommConfig(this, Map.copyOf(sources));
        }

        private void validate()
        {
            require(worldSize >= 1, "worldSize must be at least 1, got " + worldSize);
            require(rank >= 0 && rank < worldSize, "rank must be in [0, " + worldSize + "), got " + rank);
            require(localRank == DERIVE || localRank >= 0, "localRank must not be negative, got " + localRank);
            require(localSize == DERIVE || localSize >= 1, "localSize must be at least 1, got " + localSize);
            require(localRank == DERIVE || localSize == DERIVE || localRank < localSize,
                "localRank " + localRank + " must be below localSize " + localSize);
            require(masterPort >= 0 && masterPort <= 65535, "masterPort must be in [0, 65535], got " + masterPort);
            require(isPositive(connectTimeout), "connectTimeout must be positive, got " + connectTimeout);
            require(isPositive(execTimeout), "execTimeout must be positive, got " + execTimeout);
            require(segmentBytes >= 1024 && segmentBytes <= 64 * 1024 * 1024 && segmentBytes % 8 == 0,
                "segmentBytes must be a multiple of 8 in [1 KiB, 64 MiB], got " + segmentBytes);
            require(maxFrameBytes >= segmentBytes,
                "maxFrameBytes (" + maxFrameBytes + ") must be at least segmentBytes (" + segmentBytes + ")");
            require(ioThreads >= 0 && ioThreads <= 64, "ioThreads must be in [0, 64], got " + ioThreads);
            require(socketNsocks >= 1 && socketNthreads >= 1 &&
                    (long)socketNsocks * socketNthreads <= SOCKETS_PER_PAIR_MAX,
                SOCKET_NSOCKS_ENV + " (" + socketNsocks + ") and " + SOCKET_NTHREADS_ENV + " (" + socketNthreads +
                ") must be at least 1, and their product (TCP connections per pair) at most " + SOCKETS_PER_PAIR_MAX);
            require(socketNthreads <= Math.max(1, ioThreads),
                SOCKET_NTHREADS_ENV + "=" + socketNthreads + " spreads each pair's connections over " + socketNthreads +
                " I/O threads, but " + IO_THREADS_ENV + "=" + ioThreads + "; set " + IO_THREADS_ENV + " to at least " +
                socketNthreads);
            require(jobToken == null || !jobToken.isEmpty(), "jobToken must not be empty");
        }

        private int intValue(
            final Map<String, String> sources, final Integer explicit, final String[] names, final int dflt)
        {
            if (explicit != null)
            {
                sources.put(names[0], explicit + " (config)");
                given.add(names[0]);
                return explicit;
            }
            for (final String name : names)
            {
                final Integer value = parseInt(name, env.get(name));
                if (value != null)
                {
                    sources.put(names[0], value + " (env " + name + ")");
                    given.add(names[0]);
                    return value;
                }
            }
            sources.put(names[0], dflt + " (default)");
            return dflt;
        }

        private String stringValue(
            final Map<String, String> sources, final String explicit, final String name, final String dflt)
        {
            if (explicit != null)
            {
                sources.put(name, explicit + " (config)");
                given.add(name);
                return explicit;
            }
            final String value = emptyToNull(env.get(name));
            if (value != null)
            {
                sources.put(name, value + " (env)");
                given.add(name);
                return value;
            }
            sources.put(name, (dflt == null ? "unset" : dflt) + " (default)");
            return dflt;
        }

        private Duration durationValue(
            final Map<String, String> sources, final Duration explicit, final String name, final Duration dflt)
        {
            if (explicit != null)
            {
                sources.put(name, explicit.toMillis() / 1000.0 + " s (config)");
                return explicit;
            }
            final String text = emptyToNull(env.get(name));
            if (text != null)
            {
                final double seconds;
                try
                {
                    seconds = Double.parseDouble(text.trim());
                }
                catch (final NumberFormatException ex)
                {
                    throw new IllegalArgumentException(name + " must be a number of seconds, got '" + text + "'");
                }
                require(seconds > 0 && seconds < 1e9, name + " must be a positive number of seconds, got " + text);
                sources.put(name, seconds + " s (env)");
                return Duration.ofNanos((long)(seconds * 1e9));
            }
            sources.put(name, dflt.toMillis() / 1000.0 + " s (default)");
            return dflt;
        }

        /** A switch: {@code 1}/{@code true} or {@code 0}/{@code false}, off by default. */
        private boolean flagValue(final Map<String, String> sources, final Boolean explicit, final String name)
        {
            final String text = stringValue(sources, explicit == null ? null : explicit.toString(), name, "0");
            if ("1".equals(text) || "true".equalsIgnoreCase(text))
            {
                return true;
            }
            require("0".equals(text) || "false".equalsIgnoreCase(text),
                name + " must be 1 or 0 (true or false), got '" + text + "'");
            return false;
        }

        private static Integer parseInt(final String name, final String text)
        {
            if (text == null || text.isBlank())
            {
                return null;
            }
            try
            {
                return Integer.parseInt(text.trim());
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException(name + " must be an integer, got '" + text + "'");
            }
        }

        private static String emptyToNull(final String s)
        {
            return s == null || s.isBlank() ? null : s.trim();
        }

        private static boolean isPositive(final Duration d)
        {
            return d != null && !d.isNegative() && !d.isZero();
        }

        private static void require(final boolean condition, final String message)
        {
            if (!condition)
            {
                throw new IllegalArgumentException(message);
            }
        }
    }
}
