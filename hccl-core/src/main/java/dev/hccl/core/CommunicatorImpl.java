package dev.hccl.core;

import dev.hccl.algorithms.LinkCosts;
import dev.hccl.algorithms.ScratchBuffers;
import dev.hccl.api.AlgorithmChoice;
import dev.hccl.api.CommConfig;
import dev.hccl.api.CommMetrics;
import dev.hccl.api.Communicator;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.RankLayout;
import dev.hccl.api.Setting;
import dev.hccl.api.TopoProbe;
import dev.hccl.api.Topology;
import dev.hccl.api.spi.BackoffWait;
import dev.hccl.api.spi.Link;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.TransportKind;
import dev.hccl.api.spi.WaitPolicy;
import dev.hccl.core.jmx.CommunicatorBean;
import dev.hccl.core.mailbox.FlowControl;
import dev.hccl.core.mailbox.LinkTraffic;
import dev.hccl.core.mailbox.Mailbox;
import dev.hccl.core.op.AlgoOverride;
import dev.hccl.core.op.AlgorithmSelector;
import dev.hccl.core.op.CloseConfirmation;
import dev.hccl.core.op.CommFailure;
import dev.hccl.core.op.CommunicatorCalls;
import dev.hccl.core.op.ExecutionStream;
import dev.hccl.core.op.OpExecutor;
import dev.hccl.core.op.OpHistory;
import dev.hccl.core.op.OpIssuer;
import dev.hccl.core.op.OpListener;
import dev.hccl.core.op.OpScope;
import dev.hccl.core.op.Operations;
import dev.hccl.core.op.PositionSurvey;
import dev.hccl.core.op.RankNumbering;
import dev.hccl.core.op.Whereabouts;
import dev.hccl.core.op.Wire;
import dev.hccl.core.topology.CoreShare;
import dev.hccl.core.topology.LinkProbe;
import dev.hccl.core.topology.StaticTopology;
import dev.hccl.core.watch.CommView;
import dev.hccl.core.watch.FlightRecorder;
import dev.hccl.core.watch.OpTelemetry;
import dev.hccl.core.watch.Watchdog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntFunction;

/**
 * The communicator: assembles the operation path ({@link OpScope}, {@link OpIssuer}, {@link OpExecutor},
 * {@link Operations}) over its links and the observers that subscribe to it ({@link FlightRecorder},
 * {@link OpTelemetry}, {@link Watchdog}), and answers what the API asks of it. Checks run on the caller's thread;
 * each operation is numbered and run on the execution stream against the point-to-point primitives of its
 * {@code OpContext}. A failure on the wire fails the communicator: the operation, every queued one and every later one
 * complete with an {@link HcclException}, and the peers are told.
 */
final class CommunicatorImpl extends CommunicatorCalls implements CommView
{
    private static final Logger LOG = LoggerFactory.getLogger(CommunicatorImpl.class);
    private static final long CLOSE_WAIT_SLACK_MILLIS = 5_000;

    private final CommConfig config;
    private final Fabric fabric;
    private final long commId;
    private final int rank;
    /** The ranks here and in the root communicator, both ways. */
    private final RankNumbering numbering;
    /** The link to each rank, by its rank here. */
    private final IntFunction<Link> links;
    private final StaticTopology topology;
    private final int localRank;
    private final int localSize;
    private final Mailbox mailbox;
    /** The collectives issued, which close() confirms with the peers. */
    private final OpHistory history = new OpHistory();
    /** What every operation sees of this communicator. */
    private final OpScope scope;
    /** The last operations, dumped on failure and on demand. */
    private final FlightRecorder recorder;
    private final Watchdog.Registration stallWatch;
    private final ExecutionStream stream;
    private final RegisteredBuffers registered;

    private final AlgorithmSelector algorithms;
    private final OpExecutor executor;
    /** The operations' counters and flight-recorder events, and the failure's. */
    private final OpTelemetry telemetry;
    /** Unregisters the communicator's MBean. */
    private final Runnable mbean;
    private final OpIssuer issuer;
    private final Operations ops;
    private final Children children;
    private final CommFailure failure;

    CommunicatorImpl(
        final CommConfig config,
        final Fabric fabric,
        final long commId,
        final int rank,
        final int[] globalRanks,
        final StaticTopology topology)
    {
        this.config = config;
        this.fabric = fabric;
        this.commId = commId;
        this.rank = rank;
        this.numbering = new RankNumbering(globalRanks);
        this.topology = topology;
        final RankLayout layout = topology.layout();
        this.localRank = config.localRank() != CommConfig.DERIVE && isRoot() ? config.localRank() :
            layout.localRank(rank);
        this.localSize = config.localSize() != CommConfig.DERIVE && isRoot() ? config.localSize() :
            layout.sizeOf(layout.nodeOf(rank));
        // The node's shared memory: the root communicator's alone, as one arena serves one operation at a time.
        final NodeArena nodeArena = isRoot() ? fabric.nodeArena() : null;
        this.registered = new RegisteredBuffers(this, null == nodeArena ? null : nodeArena.registeredMemory());
        this.algorithms = new AlgorithmSelector(config.get(AlgoOverride.SETTING), layout, config.deterministic(),
            fabric.defaultCosts(), null != nodeArena && nodeArena.members() == numbering.size());
        if (rank == 0 && LOG.isDebugEnabled())
        {
            LOG.debug("rank 0: {}", algorithms);
        }
        final CoreShare cores =
            CoreShare.of(fabric.topology(), numbering.global(rank), Runtime.getRuntime().availableProcessors());
        final WaitPolicy waitPolicy = BackoffWait.forNode(cores.ranks(), cores.cores());
        LOG.debug("rank {}: waits {} ({})", rank, waitPolicy, cores);
        this.links = fabric.links(numbering);
        this.mailbox = fabric.dispatcher().mailbox(commId);
        // The observers, which the operation path tells through one listener.
        this.recorder = new FlightRecorder(config.traceBufferSize(), this, config.dumpDir());
        this.telemetry = new OpTelemetry(commId, rank, numbering.size(), fabric.transportName());
        final OpListener listener = OpListener.all(List.of(recorder, telemetry));
        // The operation path.
        final Whereabouts whereabouts = new Whereabouts(history::lastIssued);
        this.failure = new CommFailure(rank, commId, numbering, links, mailbox, nodeArena, whereabouts, listener);
        final PositionSurvey survey = new PositionSurvey(rank, whereabouts, fabric.progressEngine(), waitPolicy,
            numbering, mailbox.positions());
        this.scope = new OpScope(rank, numbering.size(), layout, new Wire(mailbox, numbering), whereabouts,
            failure, config.execTimeout().toNanos(), fabric.progressEngine(), waitPolicy, nodeArena,
            new ScratchBuffers(OpScope.SCRATCH_SLOTS), config.segmentBytes(), survey, listener);
        this.stream = new ExecutionStream("hccl-stream-r" + rank + "-" + Long.toHexString(commId & 0xFFFF));
        this.executor = new OpExecutor(scope, mailbox);
        this.issuer = new OpIssuer(scope, history, executor, stream);
        this.ops = new Operations(scope, issuer, algorithms);
        this.children = new Children(rank, numbering.size(), commId, ops, fabric.dispatcher(), this::child);
        mailbox.attach(numbering.globalRanks(), failure);
        mailbox.positions().answerFrom(whereabouts::now);
        this.stallWatch = Watchdog.watch(scope, config.stallCheckTime(), config.dumpDir(), recorder::dump,
            telemetry::stalled);
        this.mbean = config.get(CommConfig.JMX) ? CommunicatorBean.register(commId, rank, this::metrics) : () -> { };
    }

    @Override
    public OpScope scope()
    {
        return scope;
    }

    /**
     * Measures the links for the cost model when {@code HCCL_TOPO_PROBE} asks ({@code auto}: when the communicator
     * spans more than one node), unless deterministic. Every rank calls it before the communicator is handed out.
     */
    void probeLinks()
    {
        final TopoProbe probe = config.topoProbe();
        if (probe == TopoProbe.OFF || (probe == TopoProbe.AUTO && topology.layout().nodeCount() == 1))
        {
            return;
        }
        if (config.deterministic())
        {
            if (rank == 0)
            {
                LOG.debug("rank 0: {} ignored under {}: the cost model keeps its defaults",
                    CommConfig.TOPO_PROBE, CommConfig.DETERMINISTIC);
            }
            return;
        }
        final long start = System.nanoTime();
        final LinkCosts measured = LinkProbe.measure(this, algorithms.linkCosts());
        algorithms.linkCosts(measured);
        if (rank == 0)
        {
            LOG.debug("rank 0: links probed in {} ms: {}", (System.nanoTime() - start) / 1_000_000, measured);
        }
    }

    private boolean isRoot()
    {
        return fabric.topology() == topology;
    }

    @Override
    public int rank()
    {
        return rank;
    }

    @Override
    public int worldSize()
    {
        return numbering.size();
    }

    @Override
    public int localRank()
    {
        return localRank;
    }

    @Override
    public int localSize()
    {
        return localSize;
    }

    @Override
    public AlgorithmChoice algorithmFor(final Operation operation, final long bytes)
    {
        return algorithms.choice(operation, bytes);
    }

    @Override
    public CommMetrics metrics()
    {
        return telemetry.metrics(commId, failure.get());
    }

    /**
     * The algorithm chosen for an operation of this size, for the flight recorder; null for operations without a
     * choice (split, send, receive).
     */
    @Override
    public String algorithmName(final OpDescriptor desc)
    {
        if (desc.dataType() == null)
        {
            return null;
        }
        final long perRank = desc.count() * desc.dataType().size();
        final boolean whole = desc.operation() == Operation.ALL_GATHER || desc.operation() == Operation.REDUCE_SCATTER;
        try
        {
            return algorithms.choice(desc.operation(), whole ? perRank * worldSize() : perRank, desc.dataType())
                .algorithm();
        }
        catch (final RuntimeException ex)
        {
            return null;
        }
    }

    @Override
    public Path dumpTrace()
    {
        return recorder.dump("on demand (Communicator.dumpTrace)");
    }

    @Override
    public Topology topology()
    {
        return topology;
    }

    @Override
    public <T> T setting(final Setting<T> setting)
    {
        return config.get(setting);
    }

    @Override
    public String transportTo(final int peer)
    {
        if (peer < 0 || peer >= numbering.size())
        {
            throw new IllegalArgumentException(
                "peer: must be in [0, " + numbering.size() + "), got " + peer + " (rank " + rank + ")");
        }
        return peer == rank ? "self" : fabric.transportTo(numbering.global(peer));
    }

    @Override
    public TransportKind transportKindTo(final int peer)
    {
        if (peer < 0 || peer >= numbering.size() || peer == rank)
        {
            throw new IllegalArgumentException("peer: must be in [0, " + numbering.size() + ") and not this rank, " +
                "got " + peer + " (rank " + rank + ")");
        }
        return fabric.transportKindTo(numbering.global(peer));
    }

    @Override
    public String hostName()
    {
        return topology.hostName(topology.layout().nodeOf(rank));
    }

    @Override
    public long commId()
    {
        return commId;
    }

    /** The communicator's mailbox (for tests). */
    Mailbox mailbox()
    {
        return mailbox;
    }

    @Override
    public LinkTraffic traffic()
    {
        return fabric.dispatcher().flow().traffic();
    }

    @Override
    public long silentMillis(final int peer)
    {
        return links.apply(peer).silentMillis();
    }

    /** The flow control of this communicator's links, and the traffic on them. */
    FlowControl fabricFlow()
    {
        return fabric.dispatcher().flow();
    }

    @Override
    public int[] jobRanks()
    {
        return numbering.globalRanks();
    }

    /** How long close() waits for the peers to close too: as long as they may take to arrive. */
    long closeWaitNanos()
    {
        return config.connectTimeout().toNanos();
    }

    // ---------------------------------------------------------------- abort, shrink, split

    @Override
    public ByteBuffer allocateRegistered(final int bytes)
    {
        return registered.allocate(bytes);
    }

    @Override
    public void abort()
    {
        failure.fail(new HcclException(ErrorCode.E_UNAVAIL, rank, HcclException.UNKNOWN_RANK, null,
            HcclException.NO_SEQUENCE, "aborted by the application (Communicator.abort) on rank " + rank, null));
    }

    @Override
    public int[] lostRanks()
    {
        return Arrays.stream(fabric.dispatcher().lostPeers()).map(numbering::rankOf).filter(r -> r >= 0).sorted()
            .toArray();
    }

    @Override
    protected Operations ops()
    {
        return ops;
    }

    @Override
    public Communicator shrink(final int... excludedRanks)
    {
        return children.shrink(excludedRanks);
    }

    @Override
    public Communicator split(final int color, final int key)
    {
        return children.split(color, key);
    }

    /**
     * A twin of this root communicator for {@link WarmUp}: the same ranks, links and node arena, with an id and
     * sequence of its own, so that the warm-up's operations are not numbered among the user's. Its operations must
     * end before this communicator's first (one arena serves one operation at a time); every rank made its mailbox
     * before any peer could send ({@link WarmUp#twinId}).
     *
     * @return the twin, to be closed after the warm-up.
     */
    CommunicatorImpl warmUpTwin()
    {
        fabric.retain();
        try
        {
            final CommunicatorImpl twin = new CommunicatorImpl(config, fabric, WarmUp.twinId(commId), rank,
                numbering.globalRanks(), topology);
            twin.algorithms.linkCosts(algorithms.linkCosts());
            twin.telemetry.mute();
            twin.mbean.run();
            return twin;
        }
        catch (final RuntimeException ex)
        {
            fabric.release();
            throw ex;
        }
    }

    /**
     * A communicator of some of this one's ranks over the same links (split, shrink), with this one's link costs.
     *
     * @param members its ranks, as ranks of this communicator, in their new order.
     * @param newRank this rank's place among them.
     * @param newId   its id, derived alike on every member.
     * @return the new communicator.
     */
    CommunicatorImpl child(final int[] members, final int newRank, final long newId)
    {
        final int[] subGlobal = new int[members.length];
        for (int i = 0; i < subGlobal.length; i++)
        {
            subGlobal[i] = numbering.global(members[i]);
        }
        fabric.retain();
        try
        {
            final CommunicatorImpl sub = new CommunicatorImpl(config, fabric, newId, newRank, subGlobal,
                topology.subset(members));
            // The links are the parent's: measured once, at the parent's creation.
            sub.algorithms.linkCosts(algorithms.linkCosts());
            fabric.opened(sub);
            return sub;
        }
        catch (final RuntimeException ex)
        {
            fabric.release();
            throw ex;
        }
    }

    @Override
    public void close()
    {
        if (!issuer.close())
        {
            return;
        }
        if (stream.drainAndStop(config.execTimeout().toMillis() + CLOSE_WAIT_SLACK_MILLIS))
        {
            // The stream has stopped: this thread is the only one left to touch the posted list.
            executor.completePointToPoint();
        }
        else
        {
            LOG.warn("rank {}: operations still running at close", rank);
        }
        failure.awaitPeersTold(CLOSE_WAIT_SLACK_MILLIS);
        HcclException disagreement = failure.get() == null ? CloseConfirmation.confirm(rank, numbering, history,
            mailbox.closings(), inProcess() ? 0 : closeWaitNanos(), failure) : null;
        final HcclException unreported = failure.unreported(); // before close, or while confirming
        if (disagreement == null && unreported != null)
        {
            disagreement = new HcclException(unreported.errorCode(), rank, unreported.peer(), null,
                HcclException.NO_SEQUENCE, "close(): the communicator failed after its last operation: " +
                unreported.getMessage(), unreported);
        }
        stallWatch.cancel();
        mbean.run();
        fabric.dispatcher().remove(commId);
        fabric.closed(this);
        fabric.release();
        if (disagreement != null)
        {
            throw disagreement;
        }
    }

    /** Whether every peer is a thread of this process (ranks as threads). */
    boolean inProcess()
    {
        return fabric.inProcess();
    }

    @Override
    public String toString()
    {
        return "Communicator{rank=" + rank + ", worldSize=" + worldSize() + ", localRank=" + localRank +
            ", localSize=" + localSize + ", transport=" + fabric.transportName() + "}";
    }
}
