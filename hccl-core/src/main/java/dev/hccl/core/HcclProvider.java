package dev.hccl.core;

import dev.hccl.algorithms.LinkCosts;
import dev.hccl.algorithms.kernel.Reducers;
import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.CommunicatorProvider;
import dev.hccl.api.spi.CpuList;
import dev.hccl.api.spi.JobKey;
import dev.hccl.api.spi.PeerEndpoint;
import dev.hccl.api.spi.TlsMaterial;
import dev.hccl.api.spi.Transport;
import dev.hccl.api.spi.TransportContext;
import dev.hccl.api.spi.TransportKind;
import dev.hccl.api.spi.TransportProvider;
import dev.hccl.core.bootstrap.InterfaceChoice;
import dev.hccl.core.bootstrap.InterfaceSelector;
import dev.hccl.core.bootstrap.NetInterface;
import dev.hccl.core.bootstrap.PeerInfo;
import dev.hccl.core.bootstrap.RankTable;
import dev.hccl.core.bootstrap.Rendezvous;
import dev.hccl.core.bootstrap.RootInfo;
import dev.hccl.core.bootstrap.StoreLimits;
import dev.hccl.core.bootstrap.StoreClient;
import dev.hccl.core.bootstrap.StoreServer;
import dev.hccl.core.mailbox.Dispatcher;
import dev.hccl.core.op.AlgoOverride;
import dev.hccl.core.topology.NodeIdentity;
import dev.hccl.core.topology.StaticTopology;
import dev.hccl.core.transport.InProcessHub;
import dev.hccl.core.transport.InProcessTransport;
import dev.hccl.core.transport.StartingCosts;
import dev.hccl.core.transport.TransportRouting;
import dev.hccl.core.watch.StatusService;
import org.agrona.UnsafeApi;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.concurrent.FutureTask;
import java.util.function.IntFunction;

import javax.net.ssl.SSLContext;

/**
 * Creates communicators: the bootstrap through rank 0's store, the transports between processes (plug-ins, one
 * chosen per pair), and the in-JVM transport for {@code Hccl.initAll}.
 */
public final class HcclProvider implements CommunicatorProvider
{
    /**
     * The JVM flag Agrona's access to {@code jdk.internal.misc.Unsafe} needs when Agrona is on the class path. On the
     * module path it is {@code --add-opens java.base/jdk.internal.misc=org.agrona}.
     */
    public static final String REQUIRED_JVM_FLAG = "--add-opens java.base/jdk.internal.misc=ALL-UNNAMED";

    /** The package that Agrona's {@code UnsafeApi} links against. */
    private static final String INTERNAL_MISC = "jdk.internal.misc";

    private static final Logger LOG = LoggerFactory.getLogger(HcclProvider.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    /**
     * Public for {@link java.util.ServiceLoader}.
     */
    public HcclProvider()
    {
    }

    @Override
    public Communicator init(final CommConfig given)
    {
        checkJvmFlags();
        final CommConfig config = given.get(CommConfig.RANK_TABLE_FILE) == null ? given : RankTable.apply(given);
        checkLaunched(config);
        ThreadPlacement.configure(config); // before the first library thread: the store's, the transports'
        // Before anything goes on the wire: a bad HCCL_ALGO fails here, on every rank alike.
        final AlgoOverride algorithms = config.get(AlgoOverride.SETTING);
        final int rank = config.rank();
        if (LOG.isDebugEnabled())
        {
            LOG.debug("rank {} of {}: configuration {}", rank, config.worldSize(), new TreeMap<>(config.describe()));
        }
        if (config.worldSize() == 1 && config.rootInfo() == null)
        {
            // A job of one rank needs no store and no sockets: the in-JVM transport serves it.
            final Communicator single = initAll(1, config).get(0);
            summarize(RankLayout.singleNode(1), peer -> null, config, "");
            return single;
        }
        // Before anything goes on the wire too: a bad HCCL_SOCKET_IFNAME or HCCL_IF_IP fails every rank alike.
        final InterfaceSelector interfaces = interfaces(config, rank);
        final FutureTask<Integer> kernels = WarmUp.startKernels(config.worldSize(), config.get(CommConfig.WARMUP_MS));
        final long deadline = System.nanoTime() + config.connectTimeout().toNanos();
        final Rendezvous rendezvous = Rendezvous.join(config, algorithms.canonical(), deadline);
        final Dispatcher dispatcher = new Dispatcher(config.worldSize(), config.eagerBudgetBytes());
        dispatcher.mailbox(rendezvous.commId()); // before any peer can send
        if (config.get(CommConfig.WARMUP_MS) > 0)
        {
            dispatcher.mailbox(WarmUp.twinId(rendezvous.commId())); // the same: a faster peer's warm-up may start
        }
        List<TransportRouting.Opened> opened = List.of();
        TransportRouting routing = null;
        try
        {
            final InterfaceChoice nic = interfaces.choose(rendezvous.routeToRoot());
            LOG.debug("rank {}: interface {}", rank, nic);
            final String nodeId = NodeIdentity.local(config.nodeId());
            final List<TransportRouting.Opened> transports = TransportRouting.open(transportProviders(),
                name -> new TransportContext(rank, config.worldSize(), rendezvous.commId(), rendezvous.token(),
                    nodeId, nic.address(), config, dispatcher, rendezvous.bootstrap(name)));
            opened = transports;
            final Map<String, byte[]> addresses = new LinkedHashMap<>();
            transports.forEach(o -> addresses.put(o.name(), o.transport().localAddress()));
            final PeerInfo mine = new PeerInfo(nic.address().getHostAddress(), nodeId, NodeIdentity.hostName(),
                nic.name(), config.eagerBudgetBytes(), CpuList.allowedOrUnknown(), addresses);
            final PeerInfo[] peers = rendezvous.exchange(mine, deadline);
            for (int r = 0; r < peers.length; r++)
            {
                dispatcher.flow().grantedBy(r, peers[r].eagerBudget());
            }
            routing = TransportRouting.connect(rank, transports,
                (name, r) -> new PeerEndpoint(r, peers[r].nodeId(), peers[r].address(name)), config.worldSize(),
                deadline);
            final StaticTopology topology = topology(peers);
            final StatusService status = new StatusService();
            final Fabric fabric = new Fabric(routing, dispatcher, topology, startingCosts(transports, peers), status);
            final CommunicatorImpl comm = new CommunicatorImpl(config, fabric, rendezvous.commId(), rank,
                identity(config.worldSize()), topology);
            try
            {
                comm.probeLinks();
                final long warmUpStart = System.nanoTime();
                // The reductions' warm-up first, so that it does not share the cores with the collective one.
                final int reductions = WarmUp.awaitKernels(kernels, config.get(CommConfig.WARMUP_MS));
                final int warmUps = WarmUp.run(comm.worldSize(), comm::warmUpTwin, config.get(CommConfig.WARMUP_MS));
                LOG.debug("rank {}: warmed up in {} ms, {} all-reduces; {} local reductions", rank,
                    (System.nanoTime() - warmUpStart) / 1_000_000, warmUps, reductions);
            }
            catch (final RuntimeException ex)
            {
                // The close of a failed communicator reports the failure again: the cause stays the one thrown.
                try
                {
                    comm.close();
                }
                catch (final RuntimeException closing)
                {
                    ex.addSuppressed(closing);
                }
                throw ex;
            }
            final Rendezvous.StatusEndpoint endpoint = rendezvous.serveStatus(status::report);
            status.serve(comm, fabric::children, endpoint == null ? null : endpoint.stop());
            LOG.debug("rank {}: communicator ready: {} over {}; topology {}", rank, comm, routing.names(), topology);
            if (rank == 0)
            {
                summarize(topology.layout(), routing::transportTo, config, endpoint == null ? "" :
                    JobSummary.status(endpoint.address(), config));
            }
            return comm;
        }
        catch (final RuntimeException ex)
        {
            rendezvous.initFailed(ex);
            if (routing != null)
            {
                routing.close();
            }
            else
            {
                opened.forEach(o -> o.transport().close());
            }
            throw ex;
        }
        finally
        {
            rendezvous.close();
        }
    }

    @Override
    public String getRootInfo(final CommConfig config)
    {
        ThreadPlacement.configure(config);
        final String host = advertisedHost(config);
        final String token = config.jobToken() != null ? config.jobToken() : Rendezvous.newToken();
        final StoreServer server;
        try
        {
            final TlsMaterial tls = TlsMaterial.of(config);
            server = StoreServer.start(StoreServer.bindAddress(new InetSocketAddress(host, 0)), JobKey.of(token),
                StoreLimits.forJob(0, config.connectTimeout()), tls == null ? null : tls.sslContext());
        }
        catch (final IOException ex)
        {
            throw new HcclException(ErrorCode.E_TCP_CONNECT, "cannot start the rendezvous store: " + ex, ex);
        }
        final RootInfo info = new RootInfo(host, server.port(), token);
        info.registerStarted(server);
        return info.toString();
    }

    @Override
    public boolean releaseRootInfo(final String rootInfo)
    {
        final StoreServer started = RootInfo.parse(rootInfo).adoptStarted();
        if (started == null)
        {
            return false;
        }
        started.close();
        return true;
    }

    @Override
    public Optional<String> jobStatus(
        final InetSocketAddress store, final String token, final SSLContext tls, final Duration timeout)
    {
        try (StoreClient client = StoreClient.connect(store, -1, System.nanoTime() + timeout.toNanos(),
            JobKey.of(token), tls))
        {
            final byte[] report = client.status();
            return report == null ? Optional.empty() : Optional.of(new String(report, StandardCharsets.UTF_8));
        }
    }

    @Override
    public List<Communicator> initAll(final int worldSize, final CommConfig config)
    {
        checkJvmFlags();
        config.get(AlgoOverride.SETTING); // a bad HCCL_ALGO fails here, before any communicator is made
        ThreadPlacement.configure(config);
        final InProcessHub hub = new InProcessHub(worldSize);
        final long commId = RANDOM.nextLong() & Long.MAX_VALUE;
        final StaticTopology topology = StaticTopology.singleNode(worldSize, NodeIdentity.local(config.nodeId()),
            NodeIdentity.hostName());
        final int[] ranks = identity(worldSize);
        final Dispatcher[] dispatchers = new Dispatcher[worldSize];
        final Transport[] transports = new Transport[worldSize];
        for (int r = 0; r < worldSize; r++)
        {
            dispatchers[r] = new Dispatcher(worldSize, config.eagerBudgetBytes());
            dispatchers[r].mailbox(commId);
            transports[r] = hub.register(r, dispatchers[r]);
        }
        final List<Communicator> comms = new ArrayList<>(worldSize);
        for (int r = 0; r < worldSize; r++)
        {
            final Fabric fabric = new Fabric(TransportRouting.single(transports[r], InProcessTransport.KIND, worldSize),
                dispatchers[r], topology, StartingCosts.of(List.of(InProcessTransport.KIND)), null);
            comms.add(new CommunicatorImpl(config, fabric, commId, r, ranks, topology));
        }
        return Collections.unmodifiableList(comms);
    }

    /**
     * The flag that opens {@code jdk.internal.misc} to {@code module}: Agrona's module is the one that needs it, as
     * hccl-java's own code reaches {@code Unsafe} only through Agrona's {@code UnsafeApi}.
     *
     * @param module a named module, or an unnamed one (the class path).
     * @return the flag naming the module, or {@code ALL-UNNAMED} for an unnamed one.
     */
    static String requiredJvmFlag(final Module module)
    {
        return module.isNamed()
            ? "--add-opens java.base/" + INTERNAL_MISC + "=" + module.getName()
            : REQUIRED_JVM_FLAG;
    }

    /**
     * The module whose code links against {@code jdk.internal.misc.Unsafe}: named ({@code org.agrona}) on the module
     * path, unnamed on the class path. The class literal loads {@code UnsafeApi} without initialising it.
     */
    private static Module agronaModule()
    {
        return UnsafeApi.class.getModule();
    }

    /**
     * Fails fast, naming the flag for the path Agrona is on, when the JVM does not give Agrona's module access to
     * {@code jdk.internal.misc}: without it Agrona fails later with an obscure {@code IllegalAccessError}. Agrona
     * links against the package, it does not reflect into it, so the package being exported to it is what counts:
     * {@code --add-opens} (the documented flag) exports it, and so does {@code --add-exports}.
     */
    static void checkJvmFlags()
    {
        final Module agrona = agronaModule();
        if (!Object.class.getModule().isExported(INTERNAL_MISC, agrona))
        {
            throw new HcclException(ErrorCode.E_ENV, "hccl-java needs the JVM flag '" + requiredJvmFlag(agrona) +
                "' (Agrona" + (agrona.isNamed() ? ", module " + agrona.getName() + "," : "") +
                " reaches jdk.internal.misc.Unsafe): add it to the java command line or to JDK_JAVA_OPTIONS" +
                (agrona.isNamed() ? "" : "; bin/hcclrun and bin/hccl-java set it for you"));
        }
        // Choose (and self-check) the reduction kernels now, as part of creation, not inside the first collective.
        Reducers.family();
    }

    /**
     * Refuses a process that no launcher numbered, as {@code torch.distributed}'s {@code env://} does: each of several
     * such processes would run as a job of one rank, and all of them would "succeed". Warns when ranks of a job of
     * several look for rank 0 at the default address, which reaches only this host.
     */
    static void checkLaunched(final CommConfig config)
    {
        if (!config.given(CommConfig.WORLD_SIZE))
        {
            throw new HcclException(ErrorCode.E_ENV, "no rank and world size: none of the launcher variables " +
                CommConfig.launcherVariables() + " is set, so this process cannot tell whether it is one rank of " +
                "many. Start it with a launcher (bin/hcclrun, torchrun, mpirun, srun), or ask for a single rank " +
                "explicitly: WORLD_SIZE=1 in the environment, or CommConfig.builder().worldSize(1)");
        }
        if (config.worldSize() > 1 && config.rootInfo() == null && !config.given(CommConfig.MASTER_ADDR))
        {
            LOG.warn("rank {} of {}: {} is not set, so every rank looks for rank 0's store at {}:{}, which reaches " +
                "only this host; for a job across hosts set {} to rank 0's address", config.rank(),
                config.worldSize(), CommConfig.MASTER_ADDR, config.masterAddr(), config.masterPort(),
                CommConfig.MASTER_ADDR);
        }
    }

    /**
     * Logs the job's one INFO line ({@link JobSummary}); rank 0 calls it once its communicator is ready.
     */
    private static void summarize(final RankLayout layout, final IntFunction<String> transportTo,
        final CommConfig config, final String statusAt)
    {
        if (LOG.isInfoEnabled())
        {
            LOG.info(JobSummary.line(HcclProvider.class.getPackage().getImplementationVersion(), layout, 0,
                transportTo, config) + statusAt);
        }
    }

    /**
     * The cost model's starting figures, alike on every rank: from the kinds of the transports that every rank opened
     * (a pair whose shared-memory segment did not fit falls back to TCP, but the figures must not depend on what only
     * that pair knows).
     */
    private static LinkCosts startingCosts(final List<TransportRouting.Opened> opened, final PeerInfo[] peers)
    {
        final List<TransportKind> everyRankOpened = new ArrayList<>();
        for (final TransportRouting.Opened o : opened)
        {
            if (Arrays.stream(peers).allMatch(peer -> peer.address(o.name()) != null))
            {
                everyRankOpened.add(o.kind());
            }
        }
        return StartingCosts.of(everyRankOpened);
    }

    /** The transport plug-ins on the class or module path (TCP and shared memory in the library's artifact). */
    private static ServiceLoader<TransportProvider> transportProviders()
    {
        return ServiceLoader.load(TransportProvider.class, HcclProvider.class.getClassLoader());
    }

    private static StaticTopology topology(final PeerInfo[] peers)
    {
        final List<StaticTopology.Place> places = new ArrayList<>(peers.length);
        for (final PeerInfo peer : peers)
        {
            places.add(new StaticTopology.Place(peer.nodeId(), peer.hostName(), peer.ifName(), peer.host(),
                peer.cpus()));
        }
        return new StaticTopology(places);
    }

    private static int[] identity(final int n)
    {
        final int[] ranks = new int[n];
        for (int i = 0; i < n; i++)
        {
            ranks[i] = i;
        }
        return ranks;
    }

    /**
     * Applies HCCL_SOCKET_IFNAME and HCCL_IF_IP to this machine's interfaces.
     *
     * @throws HcclException E_PARA naming the variable and listing the interfaces when it allows none, E_UNAVAIL
     *                       when no interface is up.
     */
    private static InterfaceSelector interfaces(final CommConfig config, final int rank)
    {
        try
        {
            return InterfaceSelector.of(NetInterface.local(), config.socketIfname(), config.ifIp());
        }
        catch (final IllegalArgumentException ex)
        {
            throw new HcclException(ErrorCode.E_PARA, rank, HcclException.UNKNOWN_RANK, Operation.INIT,
                HcclException.NO_SEQUENCE, ex.getMessage(), ex);
        }
        catch (final IllegalStateException | SocketException ex)
        {
            throw new HcclException(ErrorCode.E_UNAVAIL, rank, HcclException.UNKNOWN_RANK, Operation.INIT,
                HcclException.NO_SEQUENCE, ex.getMessage(), ex);
        }
    }

    /**
     * The address rank 0 hands out in a root info: MASTER_ADDR when set and HCCL_IF_IP is not, else the address of
     * the interface chosen as for the transport (there is no rank 0 to route to yet).
     */
    private static String advertisedHost(final CommConfig config)
    {
        if (config.ifIp() == null && config.given(CommConfig.MASTER_ADDR))
        {
            return config.masterAddr();
        }
        final InterfaceChoice nic = interfaces(config, HcclException.UNKNOWN_RANK).choose(null);
        LOG.debug("root info: interface {}", nic);
        return nic.address().getHostAddress();
    }
}
