package dev.hccl.core.bootstrap;

import dev.hccl.api.CommConfig;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.Bootstrap;
import dev.hccl.api.spi.JobKey;
import dev.hccl.api.spi.TlsMaterial;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * Brings the ranks of a job together through rank 0's store: rank 0 serves the store (started here, or adopted from
 * {@code getRootInfo}), decides the job token and communicator id, and every rank publishes its {@link PeerInfo}
 * and waits for everyone else's. Ranks that do not arrive in time are named in the error every other rank gets.
 */
public final class Rendezvous implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(Rendezvous.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    /**
     * After the rendezvous was given up, how long rank 0 keeps the store up for the other ranks to read why at least;
     * longer while its connect timeout runs, for ranks that have not arrived yet.
     */
    private static final long VERDICT_LINGER_NANOS = 2_000_000_000L;
    /** How long a second claimant of a rank waits for the first to name itself. */
    private static final long CLAIMANT_WAIT_NANOS = 2_000_000_000L;

    private final int rank;
    private final int worldSize;
    private final StoreServer server;
    /**
     * On rank 0 of a job with a token of its own: how to serve {@code hccl-status} after the rendezvous (the job key,
     * TLS, the store's host and limits); else null.
     */
    private final StatusSetting status;
    private final StoreClient client;
    private final String token;
    private final long commId;
    private final long deadlineNanos;

    private Rendezvous(
        final int rank, final int worldSize, final StoreServer server, final StatusSetting status,
        final StoreClient client, final String token, final long commId, final long deadlineNanos)
    {
        this.status = status;
        this.deadlineNanos = deadlineNanos;
        this.rank = rank;
        this.worldSize = worldSize;
        this.server = server;
        this.client = client;
        this.token = token;
        this.commId = commId;
    }

    /**
     * Makes a fresh job token.
     *
     * @return 128 random bits in hex.
     */
    public static String newToken()
    {
        final byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /**
     * Joins: rank 0 starts (or adopts) the store; every rank connects to it and learns the token and communicator id.
     *
     * @param config        the configuration.
     * @param algorithms    {@code HCCL_ALGO} as parsed, in a canonical form that is the same on every rank that forces
     *                      the same algorithms: rank 0's must equal this rank's.
     * @param deadlineNanos when to give up, as {@link System#nanoTime()}.
     * @return the rendezvous.
     */
    public static Rendezvous join(final CommConfig config, final String algorithms, final long deadlineNanos)
    {
        final int rank = config.rank();
        final RootInfo rootInfo = config.rootInfo() == null ? null : RootInfo.parse(config.rootInfo());
        final InetSocketAddress storeAddress = rootInfo != null ? rootInfo.storeAddress() :
            StoreAddress.resolve(config.masterAddr(), config.masterPort(), rank, deadlineNanos, InetSocketAddress::new);
        // The token proves membership; without one the key is public, and rank 0 hands out a token for the transports
        // to whoever asks the store, which is what an unauthenticated job means.
        final String configuredToken = rootInfo != null ? rootInfo.token() : config.jobToken();
        final JobKey key = JobKey.of(configuredToken == null ? "" : configuredToken);
        final TlsMaterial tlsFiles = TlsMaterial.of(config);
        final SSLContext tls = tlsFiles == null ? null : tlsFiles.sslContext();
        StoreServer server = null;
        if (rank == 0)
        {
            server = rootInfo != null ? rootInfo.adoptStarted() : null;
            if (server != null)
            {
                // Started by getRootInfo before the world size was known.
                server.limits(StoreLimits.forJob(config.worldSize(), config.connectTimeout()));
            }
            else
            {
                try
                {
                    server = StoreServer.start(StoreServer.bindAddress(storeAddress), key,
                        StoreLimits.forJob(config.worldSize(), config.connectTimeout()), tls);
                }
                catch (final IOException ex)
                {
                    throw new HcclException(ErrorCode.E_TCP_CONNECT, rank, HcclException.UNKNOWN_RANK, Operation.INIT,
                        HcclException.NO_SEQUENCE, "rank 0 cannot serve the rendezvous store on port " +
                        storeAddress.getPort() + ": " + ex.getMessage() + " (is MASTER_PORT taken by another job?)", ex);
                }
            }
        }
        StoreClient client = null;
        try
        {
            client = StoreClient.connect(storeAddress, rank, deadlineNanos, key, tls);
            String token = configuredToken;
            final long commId;
            if (rank == 0)
            {
                if (token == null)
                {
                    token = newToken();
                    client.set("token", token);
                    warnUnauthenticated(storeAddress, config.worldSize());
                }
                commId = RANDOM.nextLong() & Long.MAX_VALUE;
                client.set("comm_id", Long.toString(commId));
                client.set("world_size", Integer.toString(config.worldSize()));
                client.set("segment_size", Integer.toString(config.segmentBytes()));
                client.set("algo", algoKey(config, algorithms));
                client.set("checksum", Boolean.toString(config.get(CommConfig.CHECKSUM)));
                client.set("warm_up", Boolean.toString(config.get(CommConfig.WARMUP_MS) > 0));
            }
            else
            {
                if (token == null)
                {
                    // The challenge passed with the public key, so rank 0 has no token either.
                    token = awaitKey(client, "token", rank, deadlineNanos);
                }
                commId = Long.parseLong(awaitKey(client, "comm_id", rank, deadlineNanos));
                final int worldSize = Integer.parseInt(awaitKey(client, "world_size", rank, deadlineNanos));
                final int segmentBytes = Integer.parseInt(awaitKey(client, "segment_size", rank, deadlineNanos));
                if (segmentBytes != config.segmentBytes())
                {
                    throw disagree(client, rank, CommConfig.SEGMENT_SIZE + " differs: rank 0 uses " + segmentBytes +
                        ", rank " + rank + " " + config.segmentBytes() + "; every rank must cut messages the same way");
                }
                final boolean checksum = Boolean.parseBoolean(awaitKey(client, "checksum", rank, deadlineNanos));
                if (checksum != config.get(CommConfig.CHECKSUM))
                {
                    // A receiver that expects a CRC the sender does not send would misread every frame.
                    throw disagree(client, rank, CommConfig.CHECKSUM + " differs: rank 0 has " + (checksum ? 1 : 0) +
                        ", rank " + rank + " has " + (checksum ? 0 : 1) + "; set it alike on every rank");
                }
                final boolean warmUp = Boolean.parseBoolean(awaitKey(client, "warm_up", rank, deadlineNanos));
                if (warmUp != config.get(CommConfig.WARMUP_MS) > 0)
                {
                    // A rank that skipped the warm-up would issue its first call against its peers' warm-up.
                    throw disagree(client, rank, CommConfig.WARMUP_MS + " differs: rank 0 " + (warmUp ? "warms up" :
                        "has 0") + ", rank " + rank + (warmUp ? " has 0" : " warms up") + "; set it to 0 on every " +
                        "rank or on none");
                }
                final String algo = awaitKey(client, "algo", rank, deadlineNanos);
                if (!algo.equals(algoKey(config, algorithms)))
                {
                    // Ranks that ran different algorithms would wait for messages that never come, until
                    // HCCL_EXEC_TIMEOUT: say so now.
                    throw disagree(client, rank, CommConfig.ALGO + "/" + CommConfig.DETERMINISTIC + "/" +
                        CommConfig.TOPO_PROBE + " differ: rank 0 has " + algo + "; rank " + rank + " has " +
                        algoKey(config, algorithms) + "; every rank must choose algorithms the same way");
                }
                if (worldSize != config.worldSize())
                {
                    throw disagree(client, rank, "world size mismatch: rank 0 has WORLD_SIZE=" + worldSize + ", rank " +
                        rank + " " + config.worldSize() + "; set the same WORLD_SIZE on every rank");
                }
            }
            claim(client, rank, config.worldSize(), deadlineNanos);
            // A job without a token of its own serves no status: its key is public.
            final StatusSetting status = rank != 0 || configuredToken == null ? null : new StatusSetting(key, tls,
                storeAddress, StoreLimits.forJob(config.worldSize(), config.connectTimeout()));
            return new Rendezvous(rank, config.worldSize(), server, status, client, token, commId, deadlineNanos);
        }
        catch (final RuntimeException ex)
        {
            if (client != null)
            {
                client.close();
            }
            if (server != null)
            {
                server.close();
            }
            throw ex;
        }
    }

    /**
     * A setting this rank does not share with rank 0: the rendezvous is given up for every rank, which would otherwise
     * wait {@code HCCL_CONNECT_TIMEOUT} for this one.
     *
     * @return the error to throw here.
     */
    private static HcclException disagree(final StoreClient client, final int rank, final String verdict)
    {
        client.abort(ErrorCode.E_PARA, rank, verdict);
        return new HcclException(ErrorCode.E_PARA, rank, 0, Operation.INIT, HcclException.NO_SEQUENCE, verdict, null);
    }

    /**
     * Claims this rank. A second process with the same rank gives the rendezvous up for every rank, naming both
     * processes, so that none waits {@code HCCL_CONNECT_TIMEOUT} for the rank the launcher never numbered.
     */
    private static void claim(final StoreClient client, final int rank, final int worldSize, final long deadlineNanos)
    {
        final String me = "pid " + ProcessHandle.current().pid() + " on " + client.localAddress().getHostAddress();
        if (client.add("claim/" + rank, 1) == 1)
        {
            client.set("claimant/" + rank, me);
            return;
        }
        // The first claimant names itself just after its claim: give it a moment.
        final String first = client.getString("claimant/" + rank,
            Math.min(deadlineNanos, System.nanoTime() + CLAIMANT_WAIT_NANOS));
        final String verdict = "rank " + rank + " was claimed by two processes (" +
            (first == null ? "another" : first) + ", and " + me + "): each process of the job needs a RANK of its " +
            "own, 0 to " + (worldSize - 1) + " (check RANK, or the launcher's numbering)";
        client.abort(ErrorCode.E_PARA, rank, verdict);
        throw new HcclException(ErrorCode.E_PARA, rank, rank, Operation.INIT, HcclException.NO_SEQUENCE, verdict, null);
    }

    /**
     * Says, once per job on rank 0, what a job without a token exposes: to anyone who can reach the store, or on this
     * host's loopback, to every user of the host.
     */
    private static void warnUnauthenticated(final InetSocketAddress store, final int worldSize)
    {
        if (worldSize > 1)
        {
            LOG.warn("rank 0: no {} is set: {} can connect to {} while the job starts, read the job's token, claim a " +
                "rank and answer its collectives with numbers of its own. bin/hcclrun sets one; else set {} to the " +
                "same secret on every rank", CommConfig.JOB_TOKEN, store.getAddress().isLoopbackAddress() ?
                "any user of this host" : "anyone who can reach it", store.getAddress().getHostAddress() + ":" + store.getPort(),
                CommConfig.JOB_TOKEN);
        }
    }

    /**
     * HCCL_ALGO (parsed, in its canonical form), HCCL_DETERMINISTIC and HCCL_TOPO_PROBE, as every rank must agree on
     * them (a rank that probes waits for peers that do not).
     */
    private static String algoKey(final CommConfig config, final String algorithms)
    {
        return CommConfig.ALGO.variable() + "=" + (algorithms.isEmpty() ? "(unset)" : algorithms) + ", deterministic=" +
            config.deterministic() + ", probe=" + config.topoProbe().name().toLowerCase(Locale.ROOT);
    }

    private static String awaitKey(final StoreClient client, final String key, final int rank, final long deadline)
    {
        final String value = client.getString(key, deadline);
        if (value == null)
        {
            throw new HcclException(ErrorCode.E_TIMEOUT, rank, 0, Operation.INIT, HcclException.NO_SEQUENCE,
                "rank 0 did not set up the rendezvous in time", null);
        }
        return value;
    }

    /**
     * The job token every connection presents.
     *
     * @return the token.
     */
    public String token()
    {
        return token;
    }

    /**
     * The root communicator's id.
     *
     * @return the id, the same on every rank.
     */
    public long commId()
    {
        return commId;
    }

    /**
     * The local address that routes to rank 0: {@link InterfaceSelector} prefers its interface among equals.
     *
     * @return the address.
     */
    public InetAddress routeToRoot()
    {
        return client.localAddress();
    }

    /**
     * Publishes this rank's information and waits for every rank's.
     *
     * @param mine          this rank's information.
     * @param deadlineNanos when to give up.
     * @return every rank's information, by rank.
     * @throws HcclException E_TIMEOUT listing the ranks that did not arrive.
     */
    public PeerInfo[] exchange(final PeerInfo mine, final long deadlineNanos)
    {
        client.set("peer/" + rank, mine.encode());
        final List<String> keys = new ArrayList<>();
        for (int i = 0; i < worldSize; i++)
        {
            keys.add("peer/" + i);
        }
        final WaitReport report = new WaitReport(deadlineNanos);
        final PeerInfo[] peers = new PeerInfo[worldSize];
        for (int r = 0; r < worldSize; r++)
        {
            byte[] value;
            while ((value = client.get(keys.get(r), report.sliceEnd())) == null && report.open())
            {
                if (report.due())
                {
                    final List<Integer> missing = client.missing(keys);
                    LOG.info("rank {}: {} of {} ranks arrived; waiting for rank{} {}; {}{}", rank,
                        worldSize - missing.size(), worldSize, missing.size() == 1 ? "" : "s", missing, report.left(),
                        turnedAway(server, "; the store"));
                }
            }
            if (value == null)
            {
                final List<Integer> missing = client.missing(keys);
                final String verdict = "rank" + (missing.size() == 1 ? " " : "s ") + missing + " of " + worldSize +
                    " did not arrive within the connect timeout (" + CommConfig.CONNECT_TIMEOUT + "); " +
                    (worldSize - missing.size()) + " ranks arrived. Check that " +
                    (missing.size() == 1 ? "it was" : "they were") + " started, and with the same MASTER_ADDR and " +
                    "MASTER_PORT (or root info) and WORLD_SIZE=" + worldSize + " as this rank" +
                    turnedAway(server, "; rank 0's store");
                if (server != null)
                {
                    // the ranks that did arrive report this too, not a lost store
                    server.abort(ErrorCode.E_TIMEOUT, missing.isEmpty() ? r : missing.get(0), verdict);
                }
                throw new HcclException(ErrorCode.E_TIMEOUT, rank, missing.isEmpty() ? r : missing.get(0),
                    Operation.INIT, HcclException.NO_SEQUENCE, verdict, null);
            }
            peers[r] = PeerInfo.decode(value);
        }
        LOG.debug("rank {}: all {} ranks arrived", rank, worldSize);
        return peers;
    }

    /**
     * The store as a transport sees it while connecting: its keys apart from the rendezvous' own and from the other
     * transports'.
     *
     * @param transport the transport's name.
     * @return the view.
     */
    public Bootstrap bootstrap(final String transport)
    {
        final String prefix = "transport/" + transport + "/";
        return new Bootstrap()
        {
            @Override
            public void put(final String key, final byte[] value)
            {
                client.set(prefix + key, value);
            }

            @Override
            public byte[] get(final String key, final long deadline)
            {
                return client.get(prefix + key, deadline);
            }

            @Override
            public long add(final String key, final long delta)
            {
                return client.add(prefix + "counter/" + key, delta);
            }
        };
    }

    /**
     * This rank's init failed after the rendezvous: on rank 0, the store answers every later wait for a missing key
     * with the failure, and {@link #close} keeps it up only briefly for the others to read it, instead of until every
     * rank has disconnected (a frozen rank never does).
     *
     * @param failure why init failed.
     */
    public void initFailed(final RuntimeException failure)
    {
        if (server != null)
        {
            final HcclException known = failure instanceof HcclException ? (HcclException)failure : null;
            server.abort(known == null ? ErrorCode.E_INTERNAL : known.errorCode(),
                known == null ? HcclException.UNKNOWN_RANK : known.peer(), "rank 0's init failed: " +
                (known == null ? failure.toString() : known.getMessage()));
        }
    }

    /**
     * What rank 0's store turned away, for the message of ranks that did not arrive: the last client that looked like
     * a rank, and the connections it closed to make room for newer ones (a stranger flooding its port).
     *
     * @return the words after {@code subject}, or "" when it turned nothing away (or this rank serves no store).
     */
    private static String turnedAway(final StoreServer server, final String subject)
    {
        final String refusal = server == null ? null : server.lastRankRefusal();
        final String crowded = server == null ? null : server.crowdedOut();
        return (refusal == null ? "" : subject + " turned away " + refusal) +
            (crowded == null ? "" : subject + " closed " + crowded + " in the challenge to make room for newer ones: " +
            "a process that is not a rank of the job floods its port, which may have kept a rank out");
    }

    /** What rank 0 needs to serve {@code hccl-status}: the job's key and TLS, its store's host and limits. */
    private record StatusSetting(JobKey key, SSLContext tls, InetSocketAddress store, StoreLimits limits)
    {
    }

    /**
     * Where rank 0 serves {@code hccl-status}, and what stops it.
     *
     * @param address the host of rank 0's store, and a port of the status service's own.
     * @param stop    stops it.
     */
    public record StatusEndpoint(InetSocketAddress address, AutoCloseable stop)
    {
    }

    /**
     * After a successful init, on rank 0 of a job with a token of its own ({@code HCCL_JOB_TOKEN}): a store of its own
     * on a free port of the rendezvous store's host, answering {@code hccl-status} with {@code report} to callers that
     * prove the job key (over TLS when the job uses it), as a rank proves it to the rendezvous. Not on
     * {@code MASTER_PORT}: a later rendezvous there (a second communicator of the job) must never meet it.
     *
     * @param report the job's status as UTF-8 JSON, or null while there is none.
     * @return where it listens and what stops it; null on other ranks, in a job without a token, or when no port could
     *         be had (logged: the status is an aid, never a reason for init to fail).
     */
    public StatusEndpoint serveStatus(final Supplier<byte[]> report)
    {
        if (status == null)
        {
            return null;
        }
        try
        {
            final InetSocketAddress here = new InetSocketAddress(status.store().getHostString(), 0);
            final StoreServer server = StoreServer.start(StoreServer.bindAddress(here), status.key(),
                status.limits(), status.tls());
            server.serveStatus(report);
            return new StatusEndpoint(new InetSocketAddress(status.store().getHostString(), server.port()),
                server::close);
        }
        catch (final IOException ex)
        {
            LOG.warn("rank 0: no status for hccl-status: cannot listen on {}: {}", status.store().getHostString(),
                ex.toString());
            return null;
        }
    }

    /**
     * Disconnects from the store; on rank 0, stops it once every rank has disconnected (or the connect deadline
     * passed): transports agree on pairs through it until each rank is connected, and a pair of other ranks may still
     * be doing so when rank 0 is done. When the rendezvous was given up (here, by {@link #initFailed}, or by another
     * rank), the store answers in the background until every rank has heard why, or until the connect deadline: a
     * rank that arrives late fails at once with the reason rather than waiting for a store that is gone.
     */
    @Override
    public void close()
    {
        client.close();
        if (server == null)
        {
            return;
        }
        if (server.aborted() != null)
        {
            server.closeOnceVerdictHeard(worldSize, Math.max(deadlineNanos, System.nanoTime() + VERDICT_LINGER_NANOS));
            return;
        }
        server.awaitClientsGone(Math.max(0, (deadlineNanos - System.nanoTime()) / 1_000_000L));
        server.close();
    }
}
