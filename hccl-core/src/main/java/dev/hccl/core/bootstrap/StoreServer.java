package dev.hccl.core.bootstrap;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.JobKey;
import dev.hccl.api.spi.LibraryThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import javax.net.ssl.SSLContext;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The key-value rendezvous store that rank 0 serves over TCP, as torchrun's TCPStore: {@code set}, blocking
 * {@code get} with a timeout, atomic {@code add}, {@code check} of which keys exist, and {@code abort}, which gives the
 * rendezvous up for every rank with a verdict.
 * <p>
 * Only clients that prove the job key are served ({@link StoreGate}, which also layers TLS when the store requires
 * it); nothing secret is stored. Everything a client drives is bounded ({@link StoreLimits}): connections in the
 * challenge and admitted ones apart (a thread each), so that a stranger's flood never keeps a rank out
 * ({@link ChallengeSlots}), the time to pass the challenge, silence between requests, bytes stored.
 */
public final class StoreServer implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(StoreServer.class);

    /**
     * Stores of this JVM that still answer late ranks with a verdict ({@link #closeOnceVerdictHeard}), by port: a new
     * rendezvous of this JVM on that port closes them rather than fail to bind.
     */
    private static final ConcurrentHashMap<Integer, StoreServer> TELLING_VERDICT = new ConcurrentHashMap<>();

    private final ServerSocket server;
    private final RefusalLog refusals = new RefusalLog();
    private final StoreGate gate;
    private volatile StoreLimits limits;
    /** Closes a connection whose challenge overruns; one daemon thread per store. */
    private final ScheduledExecutorService timer =
        Executors.newSingleThreadScheduledExecutor(task -> LibraryThreads.newThread(task, "hccl-store-timer"));
    /** Connections that have not proven the job key yet. */
    private final ChallengeSlots challenges = new ChallengeSlots();
    /** Connections that have. */
    private final AtomicInteger admitted = new AtomicInteger();
    /** The keys and values, their bounds, and the verdict. */
    private final StoreTable table = new StoreTable();
    private final Set<Socket> clients = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    /** The job's status for {@link StoreProtocol#STATUS}, or null. */
    private volatile Supplier<byte[]> status;
    private volatile boolean closed;

    private StoreServer(final ServerSocket server, final JobKey key, final StoreLimits limits, final SSLContext tls)
    {
        this.server = server;
        gate = new StoreGate(key, tls, refusals, this::abort, new GuessPacer(limits.guessDelayMillis()));
        this.limits = limits;
        acceptor = LibraryThreads.newThread(this::acceptLoop, "hccl-store-accept");
        acceptor.start();
    }

    /**
     * Starts a store.
     *
     * @param bind   where to listen ({@link #bindAddress}); port 0 picks a free one.
     * @param key    the job key clients must prove.
     * @param limits what it accepts.
     * @return the running store.
     * @throws IOException when the address cannot be bound (the port is taken, say).
     */
    public static StoreServer start(final InetSocketAddress bind, final JobKey key, final StoreLimits limits)
        throws IOException
    {
        return start(bind, key, limits, null);
    }

    /**
     * Starts a store, over mutual TLS when {@code tls} is given: a client must present a certificate the CA signed.
     *
     * @param bind   where to listen ({@link #bindAddress}); port 0 picks a free one.
     * @param key    the job key clients must prove.
     * @param limits what it accepts.
     * @param tls    the TLS context ({@code TlsMaterial.sslContext()}), or null for plain TCP.
     * @return the running store.
     * @throws IOException when the address cannot be bound (the port is taken, say).
     */
    public static StoreServer start(
        final InetSocketAddress bind, final JobKey key, final StoreLimits limits, final SSLContext tls)
        throws IOException
    {
        // In the clear even under TLS: serve() layers TLS over a connection whose first byte opens a handshake.
        final ServerSocket socket = new ServerSocket();
        socket.setReuseAddress(true);
        try
        {
            bind(socket, bind);
        }
        catch (final IOException ex)
        {
            socket.close();
            throw ex;
        }
        final StoreServer store = new StoreServer(socket, key, limits, tls);
        LOG.debug("rendezvous store listening on {}", socket.getLocalSocketAddress());
        return store;
    }

    /**
     * Binds, after closing a store of this JVM that holds the port only to tell late ranks of an earlier rendezvous
     * why it was given up: a new job on the port (a retry in the same process) comes first.
     */
    private static void bind(final ServerSocket socket, final InetSocketAddress bind) throws IOException
    {
        try
        {
            socket.bind(bind, 128);
        }
        catch (final IOException ex)
        {
            final StoreServer telling = bind.getPort() == 0 ? null : TELLING_VERDICT.remove(bind.getPort());
            if (telling == null)
            {
                throw ex;
            }
            LOG.debug("rendezvous store: port {} is taken by an earlier rendezvous' verdict; closing that",
                bind.getPort());
            telling.close();
            socket.bind(bind, 128);
        }
    }

    /**
     * The port the store listens on.
     *
     * @return the port.
     */
    public int port()
    {
        return server.getLocalPort();
    }

    private void acceptLoop()
    {
        while (!closed)
        {
            try
            {
                final Socket client = server.accept();
                final StoreLimits now = limits;
                final Challenge challenge = new Challenge(client);
                final Challenge oldest =
                    challenges.enter(challenge, now.maxChallenges(), now.maxChallengesPerAddress());
                if (oldest != null && oldest.cut())
                {
                    refusals.warn("rendezvous store: {} connections are in the challenge at once (at most {}, {} from " +
                        "one address); closed the oldest, from {}, which had not proven the job token in {} ms. A " +
                        "process that is not a rank of the job keeps connecting to port {}", challenges.size(),
                        now.maxChallenges(), now.maxChallengesPerAddress(), oldest.socket().getRemoteSocketAddress(),
                        oldest.ageMillis(System.nanoTime()), port());
                }
                client.setTcpNoDelay(true);
                client.setKeepAlive(true);
                clients.add(client);
                // Started by the acceptor, whose CPUs it inherits: no placement of its own (a process per client).
                final Thread t = new Thread(() -> serve(challenge), "hccl-store-" + client.getRemoteSocketAddress());
                t.setDaemon(true);
                t.start();
            }
            catch (final IOException ex)
            {
                if (!closed)
                {
                    LOG.warn("rendezvous store: accept failed: {}", ex.toString());
                    try
                    {
                        Thread.sleep(100); // out of file descriptors, say: do not spin
                    }
                    catch (final InterruptedException ie)
                    {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
            }
        }
    }

    private void serve(final Challenge challenge)
    {
        final Socket client = challenge.socket();
        final AtomicBoolean seated = new AtomicBoolean();
        try (client)
        {
            // The whole challenge has a deadline, not each read: a client trickling bytes must not hold a slot either.
            client.setSoTimeout(limits.handshakeMillis());
            final ScheduledFuture<?> deadline =
                timer.schedule(challenge::cut, limits.handshakeMillis(), TimeUnit.MILLISECONDS);
            final StoreGate.Admitted streams;
            try
            {
                streams = gate.admit(client, () ->
                {
                    final StoreGate.Seat seat = seat(challenge);
                    seated.set(seat == StoreGate.Seat.TAKEN);
                    return seat;
                });
            }
            finally
            {
                deadline.cancel(false);
                challenges.leave(challenge);
            }
            if (streams != null)
            {
                try
                {
                    serveRequests(client, streams.in(), streams.out());
                }
                finally
                {
                    // What was answered before a failure, such as part of a CHECK, still goes out.
                    streams.out().flush();
                }
            }
        }
        catch (final SocketException | EOFException ex)
        {
            LOG.debug("rendezvous store: client {} left: {}", client.getRemoteSocketAddress(), ex.toString());
        }
        catch (final IOException ex)
        {
            LOG.warn("rendezvous store: closing client {}: {}", client.getRemoteSocketAddress(), ex.toString());
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        finally
        {
            if (seated.get())
            {
                admitted.decrementAndGet();
            }
            clients.remove(client);
        }
    }

    /**
     * A client proved the key: it takes one of the admitted connections, unless its challenge was cut first or they
     * are all taken.
     */
    private StoreGate.Seat seat(final Challenge challenge)
    {
        if (!challenge.end())
        {
            return StoreGate.Seat.LATE;
        }
        final int most = limits.maxClients();
        if (admitted.incrementAndGet() > most)
        {
            admitted.decrementAndGet();
            refusals.warn("rendezvous store: {} proved the job token, but {} clients that did are served at once " +
                "already; it is told to try again", challenge.socket().getRemoteSocketAddress(), most);
            return StoreGate.Seat.FULL;
        }
        return StoreGate.Seat.TAKEN;
    }

    /**
     * The last client this store turned away that may be a rank of the job (a TLS handshake, another job token), for
     * the message of the ranks that did not arrive: the rank behind it cannot join.
     *
     * @return the client's address and why, or null.
     */
    public String lastRankRefusal()
    {
        return refusals.lastRankLike();
    }

    /**
     * The connections this store closed in their challenge to make room for newer ones ({@link ChallengeSlots}), for
     * the message of the ranks that did not arrive: a stranger that floods the store's port.
     *
     * @return how many and the last one's address, or null when none was.
     */
    public String crowdedOut()
    {
        return challenges.cutSoFar();
    }

    private void serveRequests(final Socket client, final DataInputStream in, final DataOutputStream out)
        throws IOException, InterruptedException
    {
        while (!closed)
        {
            final byte code;
            try
            {
                // A rank may wait between requests while others arrive, never longer than its own deadline.
                client.setSoTimeout((int)Math.min(Integer.MAX_VALUE, limits.idleMillis()));
                code = in.readByte();
            }
            catch (final EOFException ex)
            {
                return;
            }
            catch (final SocketTimeoutException ex)
            {
                LOG.info("rendezvous store: client {} silent for {} ms; closing", client.getRemoteSocketAddress(),
                    limits.idleMillis());
                return;
            }
            final String key = in.readUTF();
            switch (code)
            {
                case StoreProtocol.SET:
                    out.writeByte(set(key, readValue(in)) ? StoreProtocol.OK : StoreProtocol.FULL);
                    break;
                case StoreProtocol.GET:
                    final byte[] value = get(key, in.readLong());
                    final Verdict verdict = aborted();
                    if (value == null && verdict != null)
                    {
                        out.writeByte(StoreProtocol.ABORTED);
                        out.writeInt(verdict.code().code());
                        out.writeInt(verdict.rank());
                        out.writeUTF(verdict.reason());
                    }
                    else
                    {
                        answer(out, value);
                    }
                    break;
                case StoreProtocol.ADD:
                    out.writeLong(add(key, in.readLong()));
                    break;
                case StoreProtocol.ABORT:
                    final ErrorCode error = Verdict.codeOf(in.readInt());
                    final int concerned = in.readInt();
                    abort(error, concerned, in.readUTF());
                    out.writeByte(StoreProtocol.OK);
                    break;
                case StoreProtocol.STATUS:
                    final Supplier<byte[]> source = status;
                    final byte[] report = source == null ? null : source.get();
                    answer(out, report == null || report.length > StoreProtocol.MAX_VALUE_BYTES ? null : report);
                    break;
                case StoreProtocol.CHECK:
                    final int n = in.readInt();
                    if (n < 0 || n > StoreProtocol.MAX_KEYS)
                    {
                        throw new IOException("bad key count " + n);
                    }
                    out.writeInt(n);
                    for (int i = 0; i < n; i++)
                    {
                        out.writeBoolean(contains(in.readUTF()));
                    }
                    break;
                default:
                    throw new IOException("unknown request code " + code);
            }
            out.flush();
        }
    }

    /** A value ({@code OK}, its length and bytes), or {@code TIMEOUT} for none. */
    private static void answer(final DataOutputStream out, final byte[] value) throws IOException
    {
        if (value == null)
        {
            out.writeByte(StoreProtocol.TIMEOUT);
            return;
        }
        out.writeByte(StoreProtocol.OK);
        out.writeInt(value.length);
        out.write(value);
    }

    /**
     * Raises the limits, for a store started before the world size was known (a root info's), once rank 0 knows it.
     *
     * @param raised the new limits.
     */
    public void limits(final StoreLimits raised)
    {
        limits = raised;
    }

    /**
     * Where a store that clients reach at {@code advertised} listens: that address when it is given as an address of
     * this host ({@code 127.0.0.1} or {@code localhost} stays on loopback), else every interface. A host name may
     * resolve differently here than on the other hosts (Debian maps its own name to {@code 127.0.1.1}), and a
     * service address may forward here, so only a literal address or {@code localhost} narrows the listening.
     *
     * @param advertised the address the ranks dial (MASTER_ADDR and MASTER_PORT, or a root info's).
     * @return the address to bind.
     */
    public static InetSocketAddress bindAddress(final InetSocketAddress advertised)
    {
        final InetAddress address = advertised.getAddress();
        final String given = advertised.getHostString();
        try
        {
            final boolean literal = address != null &&
                ("localhost".equalsIgnoreCase(given) || given.indexOf(':') >= 0 || given.equals(address.getHostAddress()));
            if (literal && (address.isLoopbackAddress() || NetworkInterface.getByInetAddress(address) != null))
            {
                return new InetSocketAddress(address, advertised.getPort());
            }
        }
        catch (final SocketException ex)
        {
            LOG.debug("rendezvous store: cannot list the interfaces: {}", ex.toString());
        }
        LOG.debug("rendezvous store: {} is not given as an address of this host; listening on every interface",
            given);
        return new InetSocketAddress(advertised.getPort());
    }

    private static byte[] readValue(final DataInputStream in) throws IOException
    {
        final int length = in.readInt();
        if (length < 0 || length > StoreProtocol.MAX_VALUE_BYTES)
        {
            throw new IOException("bad value length " + length);
        }
        final byte[] value = new byte[length];
        in.readFully(value);
        return value;
    }

    /** Stores a value, unless that would pass the limits; returns whether it did. */
    private boolean set(final String key, final byte[] value)
    {
        if (table.set(key, value, limits.maxStoredBytes()))
        {
            return true;
        }
        refusals.warn("rendezvous store: full ({} bytes in {} keys at most); refusing key {}",
            limits.maxStoredBytes(), StoreProtocol.MAX_KEYS, key);
        return false;
    }

    /** A value, waiting for it as the client asks but never beyond the store's idle limit; null when none came. */
    private byte[] get(final String key, final long timeoutMillis) throws InterruptedException
    {
        // No rank waits longer for a key (the connect timeout), and a client that asked for more (or for a value
        // whose nanoseconds overflow) must not hold a thread beyond it.
        return table.get(key, Math.min(Math.max(0, timeoutMillis), limits.idleMillis()));
    }

    /**
     * Why the rendezvous was given up.
     *
     * @return the verdict, or null while it stands.
     */
    Verdict aborted()
    {
        return table.aborted();
    }

    /**
     * After the rendezvous was given up, keeps answering in the background until every rank has heard the verdict
     * ({@link StoreProtocol#HEARD_PREFIX}) or {@code untilNanos}, then closes. A rank started after the others failed
     * then fails at once with the reason, instead of waiting its whole connect timeout for a store that is gone and
     * blaming the network. The thread is not a daemon: a process whose main thread ends with the error still tells
     * the late ranks, and exits when they have heard it or the time is up.
     *
     * @param worldSize  the job's ranks; rank 0, which serves this store, has heard the verdict.
     * @param untilNanos when to close at the latest, as {@link System#nanoTime()}.
     */
    public void closeOnceVerdictHeard(final int worldSize, final long untilNanos)
    {
        final List<Integer> waiting = table.notHeard(worldSize);
        if (waiting.isEmpty() || untilNanos - System.nanoTime() <= 0)
        {
            close();
            return;
        }
        LOG.info("rank 0: the rendezvous was given up; its store tells rank{} {} why as {} arrive{}, for {} s at most",
            waiting.size() == 1 ? "" : "s", waiting, waiting.size() == 1 ? "it" : "they",
            waiting.size() == 1 ? "s" : "", Math.max(1, (untilNanos - System.nanoTime()) / 1_000_000_000L));
        TELLING_VERDICT.put(port(), this);
        final Thread t = LibraryThreads.newThread(() ->
        {
            try
            {
                table.awaitHeard(worldSize, untilNanos);
            }
            finally
            {
                TELLING_VERDICT.remove(port(), this);
                close();
            }
        }, "hccl-store-verdict");
        t.setDaemon(false);
        t.start();
    }

    /**
     * Gives up the rendezvous: every waiting and later {@code get} of a missing key answers with the reason, so that
     * every rank reports the verdict instead of a lost connection. The first verdict stands.
     *
     * @param code   the error every rank reports.
     * @param rank   the rank the verdict concerns, or {@link HcclException#UNKNOWN_RANK}.
     * @param reason why, in words.
     */
    public void abort(final ErrorCode code, final int rank, final String reason)
    {
        table.abort(new Verdict(code, rank, reason));
    }

    /**
     * What the store answers {@link StoreProtocol#STATUS} with from now on ({@code hccl-status}, after the rendezvous).
     *
     * @param report the job's status, as UTF-8 JSON; null or a null answer: none yet.
     */
    public void serveStatus(final Supplier<byte[]> report)
    {
        status = report;
    }

    /**
     * Waits until every client that proved the key has disconnected, at most {@code millis}: connections of strangers
     * still in the challenge do not hold it up.
     *
     * @param millis the longest wait.
     */
    public void awaitClientsGone(final long millis)
    {
        final long deadline = System.nanoTime() + millis * 1_000_000L;
        while (admitted.get() > 0 && System.nanoTime() < deadline)
        {
            try
            {
                Thread.sleep(10);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private long add(final String key, final long delta) throws IOException
    {
        final Long sum = table.add(key, delta, limits.maxStoredBytes());
        if (sum == null)
        {
            refusals.warn("rendezvous store: full ({} bytes in {} keys at most); refusing key {}",
                limits.maxStoredBytes(), StoreProtocol.MAX_KEYS, key);
            throw new IOException("the store is full");
        }
        return sum;
    }

    private boolean contains(final String key)
    {
        return table.contains(key);
    }

    /**
     * Test hook: the bytes counted against {@link StoreLimits#maxStoredBytes()}.
     *
     * @return keys and values held, in bytes.
     */
    long storedBytes()
    {
        return table.storedBytes();
    }

    /**
     * Test hook: the keys held.
     *
     * @return how many.
     */
    int keyCount()
    {
        return table.keyCount();
    }

    /**
     * Stops serving and disconnects every client.
     */
    @Override
    public void close()
    {
        closed = true;
        timer.shutdownNow();
        try
        {
            server.close();
        }
        catch (final IOException ignore)
        {
            // closing anyway
        }
        for (final Socket s : clients)
        {
            try
            {
                s.close();
            }
            catch (final IOException ignore)
            {
                // closing anyway
            }
        }
        table.close();
    }
}

