package dev.hccl.api;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The configuration of a communicator: built with {@link #builder()}, resolved and validated once in
 * {@link CommConfigBuilder#conclude()}.
 * <p>
 * Every setting is a {@link Setting}, defined once: the library's are the constants below, each transport's are its
 * provider's ({@link dev.hccl.api.spi.TransportProvider#settings()}). Each resolves alike: a value set on the builder,
 * then the environment variable (then other launchers' spellings of it), then the default. Names follow HCCL where
 * HCCL has one, and torchrun for the rendezvous.
 */
public final class CommConfig
{
    /** Value of {@link #localRank()} and {@link #localSize()} when they are to be derived from host identity. */
    public static final int DERIVE = -1;

    /** Address of rank 0's rendezvous store. */
    public static final Setting<String> MASTER_ADDR = Setting.text("MASTER_ADDR", "127.0.0.1",
        "address of rank 0's rendezvous store");
    /** Port of rank 0's rendezvous store; torchrun's default. */
    public static final Setting<Integer> MASTER_PORT = Setting.integer("MASTER_PORT", 29500, 0, 65535,
        "port of rank 0's rendezvous store");
    /** This process's rank; other launchers' variables are read as pairs with the world size. */
    public static final Setting<Integer> RANK = Setting.integer("RANK", 0, 0, Integer.MAX_VALUE - 1,
        "this process's rank");
    /** Number of ranks. */
    public static final Setting<Integer> WORLD_SIZE = Setting.integer("WORLD_SIZE", 1, 1, Integer.MAX_VALUE,
        "number of ranks");
    /** Rank within the node; derived from host identity when absent ({@link #DERIVE}). */
    public static final Setting<Integer> LOCAL_RANK = Setting.integer("LOCAL_RANK", DERIVE, DERIVE,
        Integer.MAX_VALUE - 1, "rank within the node").alsoReading(
        "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID");
    /** Ranks on this node; derived from host identity when absent ({@link #DERIVE}). */
    public static final Setting<Integer> LOCAL_WORLD_SIZE = Setting.of("LOCAL_WORLD_SIZE", DERIVE,
        Setting::parseInteger, v -> v == DERIVE || v >= 1, "at least 1", "ranks on this node").alsoReading(
        "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS");
    /**
     * Root-info string from {@code Hccl.getRootInfo()}, as an alternative to MASTER_ADDR/MASTER_PORT. Secret: it holds
     * the job token.
     */
    public static final Setting<String> ROOT_INFO = Setting.text("HCCL_ROOT_INFO", null,
        "a root-info string, instead of MASTER_ADDR/MASTER_PORT").secret();
    /** Seconds to wait for every rank to arrive and connect; 120 s, as HCCL. */
    public static final Setting<Duration> CONNECT_TIMEOUT = Setting.seconds("HCCL_CONNECT_TIMEOUT",
        Duration.ofSeconds(120), "seconds to wait for every rank to arrive and connect");
    /** Seconds any wait of an operation may last before the operation fails; 1836 s, as HCCL. */
    public static final Setting<Duration> EXEC_TIMEOUT = Setting.seconds("HCCL_EXEC_TIMEOUT",
        Duration.ofSeconds(1836), "seconds any wait inside an operation may last");
    /**
     * Seconds a connected peer may stay silent before its link fails, naming it: links carry a heartbeat every second
     * whatever the operations do, so a frozen process (stopped, in a debugger, swapping) or a lost network is named
     * within this long, while an operation may wait for a slow peer as long as {@link #EXEC_TIMEOUT}.
     */
    public static final Setting<Duration> HEARTBEAT_TIMEOUT = Setting.seconds("HCCL_HEARTBEAT_TIMEOUT",
        Duration.ofSeconds(30), "seconds a peer may stay silent (no heartbeat) before its link fails");
    /**
     * Seconds between stall checks (Horovod's {@code HOROVOD_STALL_CHECK_TIME_SECONDS}): a rank that has waited this
     * long in one operation logs a WARN saying for whom, and where every peer is, long before {@link #EXEC_TIMEOUT}.
     */
    public static final Setting<Duration> STALL_CHECK_TIME = Setting.seconds("HCCL_STALL_CHECK_TIME",
        Duration.ofSeconds(30), "seconds a wait lasts before a WARN says for whom and where the peers are");
    /**
     * Operations each communicator's flight recorder keeps (PyTorch's {@code TORCH_NCCL_TRACE_BUFFER_SIZE}): the last
     * ones issued, written with {@link Communicator#dumpTrace()}, on failure and on demand; 0 keeps none.
     */
    public static final Setting<Integer> TRACE_BUFFER_SIZE = Setting.integer("HCCL_TRACE_BUFFER_SIZE", 2000, 0,
        1_000_000, "operations each communicator's flight recorder keeps");
    /**
     * Where each rank writes its flight recorder when its communicator fails, and when a file {@code hccl-dump-now}
     * in it is touched; unset, only {@link Communicator#dumpTrace()} writes, under the temporary directory.
     */
    public static final Setting<String> DUMP_DIR = Setting.text("HCCL_DUMP_DIR", null,
        "where flight recorders are written on failure and on demand");
    /** Largest frame payload accepted from a peer, in MiB; longer frames are protocol errors. 200, as HCCL. */
    public static final Setting<Integer> BUFFSIZE = Setting.integer("HCCL_BUFFSIZE", 200, 1, 2047,
        "largest frame payload accepted from a peer, MiB");
    /** Bytes per pipelined segment: large messages are cut into segments so that send, receive and reduce overlap. */
    public static final Setting<Integer> SEGMENT_SIZE = Setting.of("HCCL_SEGMENT_SIZE", 512 * 1024,
        Setting::parseInteger, v -> v >= 1024 && v <= 64 * 1024 * 1024 && v % 8 == 0,
        "a multiple of 8 in [1 KiB, 64 MiB]", "bytes per pipelined segment");
    /**
     * Bytes each peer may send this rank ahead of its receives (NCCL's and MPI's eager protocol): a message without
     * room in the budget waits at its sender until the receive is posted (rendezvous), so a rank that does not receive
     * holds at most this much per peer. 0 sends every message by rendezvous.
     */
    public static final Setting<Integer> EAGER_BUDGET = Setting.of("HCCL_EAGER_BUDGET", 4 * 1024 * 1024,
        Setting::parseInteger, v -> v >= 0 && v <= 1024 * 1024 * 1024, "in [0, 1 GiB]",
        "bytes each peer may send ahead of this rank's receives");
    /**
     * Algorithm override: a bare name ({@code ring}: that algorithm for every operation it implements, over all
     * ranks, automatic for the rest), per level ({@code level0:NA;level1:ring}: level0 decides on one node; across
     * nodes the levels compose as in HCCL, the hierarchical schedule with the level1 algorithm between nodes), or per
     * operation ({@code allreduce=level0:NA;level1:H-D_R/allgather=ring}). {@code NA} is the automatic choice. An
     * unknown name fails {@code Hccl.init} with the list of valid ones; {@code docs/ALGORITHMS.md} lists them.
     */
    public static final Setting<String> ALGO = Setting.text("HCCL_ALGO", null, "force algorithms");
    /** Whether results must be bitwise reproducible. */
    public static final Setting<Boolean> DETERMINISTIC = Setting.flag("HCCL_DETERMINISTIC",
        "bitwise-reproducible results on every rank and in every run");
    /**
     * Whether every message between ranks carries a CRC32C of its payload, which the receiver recomputes: a mismatch
     * fails the link to the sender with an error naming it and this setting, where the job would otherwise go on with
     * bytes changed on the way (in a shared-memory ring, say, by another process of the job's user). Off by default;
     * when off, nothing is computed and nothing more is sent. Every rank must set it alike ({@code Hccl.init} fails
     * otherwise). The in-JVM transport (ranks as threads) checks nothing: its receiver reads the sender's own buffer.
     */
    public static final Setting<Boolean> CHECKSUM = Setting.flag("HCCL_CHECKSUM",
        "a CRC32C on every message between ranks, checked by the receiver");
    /**
     * Whether each communicator publishes its {@link CommMetrics} as a JMX MBean while open
     * ({@code dev.hccl:type=Communicator,...}). Off by default: registering the first one builds the JVM's platform
     * MBean server, which moved an 8-byte all-reduce's time on a two-core machine (docs/PERFORMANCE.md).
     */
    public static final Setting<Boolean> JMX = Setting.flag("HCCL_JMX",
        "publish each communicator's metrics as a JMX MBean (jconsole, JDK Mission Control)");
    /**
     * Milliseconds {@code Hccl.init} warms up (the reductions locally as it waits for its peers, then small all-reduces
     * that compile an operation's path before the first call); all ranks stop together; {@code 0}: off on every rank.
     */
    public static final Setting<Integer> WARMUP_MS = Setting.integer("HCCL_WARMUP_MS", 300, 0, 60_000,
        "milliseconds of small all-reduces at init that compile an operation's path before the first call");
    /**
     * Whether the communicator measures its links at creation for the cost model ({@link TopoProbe}): {@code 0} (the
     * default) never, {@code auto} when it spans more than one node, {@code 1} always. Off by default: it costs a
     * fraction of a second at creation (docs/PERFORMANCE.md). Ignored under {@link #DETERMINISTIC}, whose choices
     * never depend on a measurement.
     */
    public static final Setting<TopoProbe> TOPO_PROBE = Setting.of("HCCL_TOPO_PROBE", TopoProbe.OFF, text ->
    {
        try
        {
            return TopoProbe.parse(text);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException("must be auto, on (1, true) or off (0, false)");
        }
    }, v -> true, "", "measure links at creation for the cost model");
    /**
     * The network interface this rank listens on and advertises, in NCCL's {@code NCCL_SOCKET_IFNAME} grammar: a
     * comma-separated list of name prefixes ({@code eth,ib}), {@code ^} in front to exclude instead
     * ({@code ^docker,lo}), {@code =} in front for exact names ({@code =eth0,eth1}). When it matches no interface
     * that is up with an address, {@code Hccl.init} fails on that rank listing the interfaces. When unset, loopback
     * and {@code docker*}, {@code br-*}, {@code virbr*}, {@code veth*} interfaces are skipped unless nothing else is
     * up, and among several the one that routes to rank 0 wins, then IPv4 before IPv6, then the first by name.
     * {@link #IF_IP} wins over it.
     */
    public static final Setting<String> SOCKET_IFNAME = Setting.text("HCCL_SOCKET_IFNAME", null,
        "the interface to listen on and advertise");
    /**
     * The address this rank listens on and advertises; it must be an address of an interface that is up, else
     * {@code Hccl.init} fails listing the interfaces. Wins over {@link #SOCKET_IFNAME}, as in HCCL.
     */
    public static final Setting<String> IF_IP = Setting.text("HCCL_IF_IP", null,
        "the address to listen on and advertise");
    /** Shared secret every connection presents; rank 0 makes one when unset. */
    public static final Setting<String> JOB_TOKEN = Setting.text("HCCL_JOB_TOKEN", null,
        "shared secret every connection presents").secret();
    /**
     * A file that holds the job's token and only its user can read ({@code hcclrun} sets it), which rank 0's INFO line
     * names for {@code hccl-status --token-file}; the ranks still take the token from {@link #JOB_TOKEN}.
     */
    public static final Setting<String> JOB_TOKEN_FILE = Setting.text("HCCL_JOB_TOKEN_FILE", null,
        "a file only the job's user can read that holds its token, named for hccl-status");
    /** This rank's certificate chain (PEM) for mutual TLS of the store and the TCP transport; with the two below. */
    public static final Setting<String> TLS_CERT = Setting.text("HCCL_TLS_CERT", null,
        "this rank's certificate chain, PEM: mutual TLS for the store and TCP");
    /** This rank's private key (PEM PKCS#8, unencrypted) for mutual TLS. */
    public static final Setting<String> TLS_KEY = Setting.text("HCCL_TLS_KEY", null,
        "this rank's private key, PEM PKCS#8");
    /** The CA certificates (PEM) whose certificates a peer must present under mutual TLS. */
    public static final Setting<String> TLS_CA = Setting.text("HCCL_TLS_CA", null,
        "the CA certificates a peer's certificate must be signed by, PEM");
    /**
     * HCCL's rank table (JSON: servers, their devices' rank ids): the world size, rank 0's host and each rank's place,
     * as an alternative to WORLD_SIZE and MASTER_ADDR; the rank still comes from RANK_ID (or RANK, ...).
     */
    public static final Setting<String> RANK_TABLE_FILE = Setting.text("RANK_TABLE_FILE", null,
        "HCCL's rank table, JSON: world size, rank 0's host and each rank's node");
    /**
     * CPUs the library's own threads run on ({@code 3}, {@code 2-3,6}; {@code dev.hccl.api.spi.LibraryThreads}),
     * pinned with {@code taskset} as each starts; the caller's threads stay. Unset: nothing pinned, nothing spawned.
     */
    public static final Setting<String> LIBRARY_CPUS = Setting.of("HCCL_LIBRARY_CPUS", null,
        dev.hccl.api.spi.LibraryThreads::cpuList, v -> true, "", "CPUs the library's own threads are pinned to");
    /** Overrides the node identity (host name + boot id + network namespace). */
    public static final Setting<String> NODE_ID = Setting.text("HCCL_NODE_ID", null,
        "overrides the node identity");

    /**
     * The frame limit in bytes, set on the builder ({@link CommConfigBuilder#maxFrameBytes(int)}) instead of
     * {@link #BUFFSIZE}'s MiB; read only from the builder, never from the environment, and described as
     * {@link #BUFFSIZE}.
     */
    static final Setting<Integer> MAX_FRAME_BYTES = Setting.of(BUFFSIZE.variable(), null, Setting::parseInteger,
        v -> true, "", "largest frame payload accepted from a peer, bytes");

    /** The library's settings, in the order {@link #describe()} lists them. */
    public static final List<Setting<?>> SETTINGS = List.of(RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
        MASTER_ADDR, MASTER_PORT, ROOT_INFO, RANK_TABLE_FILE, CONNECT_TIMEOUT, EXEC_TIMEOUT, HEARTBEAT_TIMEOUT, STALL_CHECK_TIME,
        TRACE_BUFFER_SIZE, DUMP_DIR, BUFFSIZE, SEGMENT_SIZE, EAGER_BUDGET,
        CHECKSUM, ALGO, DETERMINISTIC, TOPO_PROBE, WARMUP_MS, JMX, SOCKET_IFNAME, IF_IP, JOB_TOKEN, JOB_TOKEN_FILE,
        TLS_CERT, TLS_KEY, TLS_CA, NODE_ID, LIBRARY_CPUS);

    /** Where a setting's value came from. */
    public enum Source
    {
        /** Set on the builder. */
        CONFIG,
        /** An environment variable. */
        ENVIRONMENT,
        /** Nothing set it. */
        DEFAULT
    }

    private final SettingValues values;

    private CommConfig(final Map<String, String> env, final Map<Setting<?>, Object> explicit)
    {
        values = new SettingValues(env, explicit);
    }

    /**
     * A new builder that reads the process environment for anything not set on it.
     *
     * @return the builder.
     */
    public static CommConfigBuilder builder()
    {
        return new CommConfigBuilder();
    }

    /**
     * A setting's value: set on the builder, else from the environment, else the default. A transport reads its own
     * settings this way.
     *
     * @param setting the setting.
     * @param <T>     its type.
     * @return the value; null only for a setting whose default is none.
     * @throws IllegalArgumentException naming the variable when its text or value is invalid.
     */
    public <T> T get(final Setting<T> setting)
    {
        return values.get(setting);
    }

    /**
     * Where a setting's value came from.
     *
     * @param setting the setting.
     * @return the source.
     */
    public Source source(final Setting<?> setting)
    {
        return values.source(setting);
    }

    /**
     * This configuration with what a description of the whole job gives (HCCL's rank table) set as if on the builder,
     * for what neither the builder nor the environment gave: the world size, rank 0's host, this rank's place in its
     * node.
     *
     * @param worldSize  the ranks of the job.
     * @param masterAddr rank 0's host.
     * @param localRank  this rank's place among its node's ranks.
     * @param localSize  the ranks of its node.
     * @return the configuration.
     * @throws IllegalArgumentException when the values are out of range.
     */
    public CommConfig launchedBy(final int worldSize, final String masterAddr, final int localRank, final int localSize)
    {
        final Map<Setting<?>, Object> more = new HashMap<>(values.explicit());
        final Object[][] launched = {{WORLD_SIZE, worldSize}, {MASTER_ADDR, masterAddr}, {LOCAL_RANK, localRank},
            {LOCAL_WORLD_SIZE, localSize}};
        for (final Object[] v : launched)
        {
            if (!given((Setting<?>)v[0]))
            {
                more.put((Setting<?>)v[0], v[1]);
            }
        }
        return conclude(values.env(), more);
    }

    /**
     * This configuration with {@code values} set as if on the builder, over whatever the builder and the environment
     * gave: for an engine that places the ranks itself (hccl-spark gives the rank, the world size and the root info
     * of its barrier stage). Each value is checked as the builder checks it.
     *
     * @param values settings and their values, each of the setting's type.
     * @return the configuration.
     * @throws IllegalArgumentException naming the setting when a value is invalid.
     * @throws ClassCastException       when a value is not of its setting's type.
     */
    public CommConfig overriding(final Map<Setting<?>, ?> values)
    {
        final Map<Setting<?>, Object> more = new HashMap<>(this.values.explicit());
        more.putAll(values);
        return conclude(this.values.env(), more);
    }

    /**
     * Whether a setting was given, on the builder or in the environment, rather than left to its default.
     *
     * @param setting the setting, such as {@link #WORLD_SIZE} (given too by another launcher's variable for it, such
     *                as {@code OMPI_COMM_WORLD_SIZE}).
     * @return true when given.
     */
    public boolean given(final Setting<?> setting)
    {
        return source(setting) != Source.DEFAULT;
    }

    /**
     * This process's rank.
     *
     * @return the rank.
     */
    public int rank()
    {
        return get(RANK);
    }

    /**
     * Number of ranks.
     *
     * @return the world size.
     */
    public int worldSize()
    {
        return get(WORLD_SIZE);
    }

    /**
     * Rank within the node.
     *
     * @return the local rank, or {@link #DERIVE}.
     */
    public int localRank()
    {
        return get(LOCAL_RANK);
    }

    /**
     * Ranks on this node.
     *
     * @return the local size, or {@link #DERIVE}.
     */
    public int localSize()
    {
        return get(LOCAL_WORLD_SIZE);
    }

    /**
     * Address of rank 0's store.
     *
     * @return host name or address.
     */
    public String masterAddr()
    {
        return get(MASTER_ADDR);
    }

    /**
     * Port of rank 0's store.
     *
     * @return the port; 0 lets the system choose.
     */
    public int masterPort()
    {
        return get(MASTER_PORT);
    }

    /**
     * Root info, as an alternative rendezvous.
     *
     * @return the string, or null.
     */
    public String rootInfo()
    {
        return get(ROOT_INFO);
    }

    /**
     * How long to wait for every rank to arrive and connect.
     *
     * @return the timeout.
     */
    public Duration connectTimeout()
    {
        return get(CONNECT_TIMEOUT);
    }

    /**
     * How long any wait of an operation may last.
     *
     * @return the timeout.
     */
    public Duration execTimeout()
    {
        return get(EXEC_TIMEOUT);
    }

    /**
     * Largest frame payload accepted from a peer.
     *
     * @return bytes: {@link #BUFFSIZE} MiB unless set in bytes on the builder.
     */
    public int maxFrameBytes()
    {
        return values.explicit().containsKey(MAX_FRAME_BYTES) ? get(MAX_FRAME_BYTES) : get(BUFFSIZE) * 1024 * 1024;
    }

    /**
     * Bytes per pipelined segment.
     *
     * @return bytes.
     */
    public int segmentBytes()
    {
        return get(SEGMENT_SIZE);
    }

    /**
     * How long a connected peer may stay silent before its link fails.
     *
     * @return the timeout.
     */
    public Duration heartbeatTimeout()
    {
        return get(HEARTBEAT_TIMEOUT);
    }

    /**
     * Operations each communicator's flight recorder keeps.
     *
     * @return the count; 0 for none.
     */
    public int traceBufferSize()
    {
        return get(TRACE_BUFFER_SIZE);
    }

    /**
     * Where flight recorders are written on failure and on demand.
     *
     * @return the directory, or null when unset.
     */
    public String dumpDir()
    {
        return get(DUMP_DIR);
    }

    /**
     * How often waits are checked for stalls.
     *
     * @return the period.
     */
    public Duration stallCheckTime()
    {
        return get(STALL_CHECK_TIME);
    }

    /**
     * Bytes each peer may send this rank ahead of its receives.
     *
     * @return bytes.
     */
    public int eagerBudgetBytes()
    {
        return get(EAGER_BUDGET);
    }

    /**
     * The algorithm override.
     *
     * @return the override, or null for automatic choice.
     */
    public String algo()
    {
        return get(ALGO);
    }

    /**
     * Whether results must be bitwise reproducible.
     *
     * @return true when deterministic.
     */
    public boolean deterministic()
    {
        return get(DETERMINISTIC);
    }

    /**
     * Whether the links are measured at creation.
     *
     * @return the setting.
     */
    public TopoProbe topoProbe()
    {
        return get(TOPO_PROBE);
    }

    /**
     * The interface selector ({@link #SOCKET_IFNAME}).
     *
     * @return the selector, or null.
     */
    public String socketIfname()
    {
        return get(SOCKET_IFNAME);
    }

    /**
     * The address to listen on and advertise ({@link #IF_IP}).
     *
     * @return the address, or null.
     */
    public String ifIp()
    {
        return get(IF_IP);
    }

    /**
     * The job token.
     *
     * @return the token, or null to have rank 0 make one.
     */
    public String jobToken()
    {
        return get(JOB_TOKEN);
    }

    /**
     * The node identity override.
     *
     * @return the identity, or null to derive it.
     */
    public String nodeId()
    {
        return get(NODE_ID);
    }

    /**
     * Every value resolved so far (every one of the library's) with where it came from, for logging once at creation.
     *
     * @return variable = value (source), secrets hidden.
     */
    public Map<String, String> describe()
    {
        final Map<String, String> out = values.describe(SETTINGS);
        if (values.explicit().containsKey(MAX_FRAME_BYTES))
        {
            out.put(BUFFSIZE.variable(), get(MAX_FRAME_BYTES) + " bytes (config)");
        }
        return out;
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
        return "CommConfig" + describe();
    }

    /**
     * Resolves the library's settings (builder, then environment, then default) and validates the whole; a
     * transport's settings resolve the same way when it asks for them.
     *
     * @param env      the environment to read.
     * @param explicit the values set on the builder.
     * @return the configuration.
     * @throws IllegalArgumentException naming the setting when a value is invalid.
     * @throws HcclException            {@link ErrorCode#E_ENV} when a launcher's pair of variables is half set
     *                                  ({@code RANK} without {@code WORLD_SIZE}, say), naming the one missing.
     */
    static CommConfig conclude(final Map<String, String> env, final Map<Setting<?>, Object> explicit)
    {
        final CommConfig c = new CommConfig(env, explicit);
        // A value that is not a number is the first thing to say, before what is missing beside it.
        c.get(RANK);
        c.get(WORLD_SIZE);
        c.values.checkLaunch();
        for (final Setting<?> s : SETTINGS)
        {
            c.get(s);
        }
        ConfigChecks.across(c, c.values.explicit().containsKey(MAX_FRAME_BYTES));
        return c;
    }
}
