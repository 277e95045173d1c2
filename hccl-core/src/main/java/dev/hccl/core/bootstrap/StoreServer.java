package dev.hccl.core.bootstrap;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.JobKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PushbackInputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The key-value rendezvous store that rank 0 serves over TCP, as torchrun's TCPStore: {@code set}, blocking
 * {@code get} with a timeout, atomic {@code add}, and {@code check} of which keys exist.
 * <p>
 * Only clients that prove the job key, in a challenge with fresh nonces from both sides ({@link StoreProtocol}), are
 * served; nothing secret is stored. Everything a client drives is bounded ({@link StoreLimits}): clients at once (a
 * thread each), the time to pass the challenge, silence between requests, bytes stored.
 * <p>
 * Under mutual TLS the store listens in the clear and looks at each connection's first byte: a TLS handshake is
 * layered over it, while a client that speaks the store's protocol in the clear is a rank without the TLS settings,
 * or one whose TLS handshake failed (a certificate refused on either side). Such a rank that proves the job key gives
 * the rendezvous up at once, saying why (it cannot join, and every rank should say why now rather than at the connect
 * timeout); one that does not prove it is refused like any stranger, so a stranger cannot end a job. A store without
 * TLS answers a ClientHello with a fatal alert, so that the rank that sent it fails at once; it gives the rendezvous
 * up itself through {@link StoreProtocol#ABORT}, since it knows the key.
 */
public final class StoreServer implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(StoreServer.class);
    /** At most one WARN a second about clients turned away. */
    private static final long REFUSAL_LOG_NANOS = 1_000_000_000L;

    /**
     * Connections from one address that may be in the challenge at once: a job's ranks on one host connect together,
     * and a stranger must not fill every slot from one address.
     */
    static final int MAX_UNPROVEN_PER_ADDRESS = 64;

    private final ServerSocket server;
    private final JobKey key;
    /** Mutual TLS for every client, or null for the clear. */
    private final SSLContext tls;
    private volatile StoreLimits limits;
    /** Closes a connection whose challenge overruns; one daemon thread per store. */
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(task ->
    {
        final Thread t = new Thread(task, "hccl-store-timer");
        t.setDaemon(true);
        return t;
    });
    /** Connections in the challenge, by address. */
    private final ConcurrentHashMap<InetAddress, Integer> unproven = new ConcurrentHashMap<>();
    private final Map<String, byte[]> values = new HashMap<>();
    /** Bytes of the keys and values held; guarded by this. */
    private long storedBytes;
    private final AtomicLong lastRefusalLog = new AtomicLong(System.nanoTime() - REFUSAL_LOG_NANOS);
    private final Set<Socket> clients = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    private volatile boolean closed;
    /** Why the rendezvous was given up, or null; guarded by this. */
    private Verdict aborted;
    /** The last TLS handshake turned away, in words, for the message of ranks that did not arrive; or null. */
    private volatile String lastTlsRefusal;

    private StoreServer(final ServerSocket server, final JobKey key, final StoreLimits limits, final SSLContext tls)
    {
        this.server = server;
        this.key = key;
        this.tls = tls;
        this.limits = limits;
        acceptor = new Thread(this::acceptLoop, "hccl-store-accept");
        acceptor.setDaemon(true);
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
            socket.bind(bind, 128);
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
                if (clients.size() >= now.maxClients())
                {
                    refuse(client, "the store serves at most " + now.maxClients() + " connections at once");
                    continue;
                }
                if (unproven(client, 1) > MAX_UNPROVEN_PER_ADDRESS)
                {
                    unproven(client, -1);
                    refuse(client, "at most " + MAX_UNPROVEN_PER_ADDRESS + " connections from one address may be in " +
                        "the challenge at once");
                    continue;
                }
                client.setTcpNoDelay(true);
                client.setKeepAlive(true);
                clients.add(client);
                final Thread t = new Thread(() -> serve(client), "hccl-store-" + client.getRemoteSocketAddress());
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

    private void serve(final Socket client)
    {
        try (client)
        {
            // The whole challenge has a deadline, not each read: a client trickling bytes must not hold a slot either.
            client.setSoTimeout(limits.handshakeMillis());
            final ScheduledFuture<?> deadline = timer.schedule(() -> closeQuietly(client), limits.handshakeMillis(),
                TimeUnit.MILLISECONDS);
            final Socket secured;
            boolean proven = false;
            DataInputStream in = null;
            DataOutputStream out = null;
            try
            {
                secured = open(client);
                if (secured != null)
                {
                    in = new DataInputStream(secured == client ? clearStream(client) :
                        new BufferedInputStream(secured.getInputStream()));
                    out = new DataOutputStream(new BufferedOutputStream(secured.getOutputStream()));
                    proven = challenge(client, in, out, tls != null && secured == client);
                }
            }
            finally
            {
                deadline.cancel(false);
                unproven(client, -1);
            }
            if (proven)
            {
                try
                {
                    serveRequests(client, in, out);
                }
                finally
                {
                    out.flush(); // what was answered before a failure, such as part of a CHECK, still goes out
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
            clients.remove(client);
        }
    }

    /**
     * Reads a connection's first byte and decides how to speak with it: a TLS handshake under TLS gets TLS layered
     * over the socket; the first byte of the store's magic gets the clear (which a store under TLS refuses after the
     * challenge); anything else, or a ClientHello at a store without TLS, is turned away.
     *
     * @return the socket to speak through ({@code client} itself for the clear, whose first byte was the magic's), or
     * null when the client was turned away.
     */
    private Socket open(final Socket client) throws IOException
    {
        final int first = client.getInputStream().read(); // one byte, unbuffered: the rest stays in the socket
        if (first == StoreProtocol.MAGIC >>> 24)
        {
            return client;
        }
        if (first != StoreProtocol.TLS_HANDSHAKE_RECORD)
        {
            if (first >= 0)
            {
                warnSometimes("rendezvous store: {} is not an hccl client (first byte 0x{}); closing",
                    client.getRemoteSocketAddress(), Integer.toHexString(first));
            }
            return null;
        }
        if (tls == null)
        {
            tlsRefused(client, "it opened a TLS handshake, but this store does not use TLS (rank 0 has no " +
                "HCCL_TLS_CERT/HCCL_TLS_KEY/HCCL_TLS_CA)");
            // Read the whole record first: closing with the client's bytes unread would send a reset, which may
            // destroy the alert before the client reads it.
            final DataInputStream record = new DataInputStream(client.getInputStream());
            record.readUnsignedShort(); // the record's version
            final int length = record.readUnsignedShort();
            if (length <= StoreProtocol.TLS_RECORD_MAX_BYTES)
            {
                record.skipNBytes(length);
                client.getOutputStream().write(StoreProtocol.TLS_PROTOCOL_VERSION_ALERT);
            }
            return null;
        }
        final SSLSocket secured = (SSLSocket)tls.getSocketFactory().createSocket(client,
            new ByteArrayInputStream(new byte[]{ (byte)first }), true);
        secured.setUseClientMode(false);
        secured.setNeedClientAuth(true);
        try
        {
            secured.startHandshake();
            return secured;
        }
        catch (final SSLException ex)
        {
            tlsRefused(client, "its TLS handshake failed: " + ex.getMessage());
            return null;
        }
    }

    /** The clear stream of a client whose first byte, the magic's, {@link #open} has read. */
    private static InputStream clearStream(final Socket client) throws IOException
    {
        // Not a SequenceInputStream: it closes each stream it ends, and closing the socket's would close the socket
        // before the answers to a request cut short are flushed.
        final PushbackInputStream in = new PushbackInputStream(new BufferedInputStream(client.getInputStream()), 1);
        in.unread(StoreProtocol.MAGIC >>> 24);
        return in;
    }

    private void tlsRefused(final Socket client, final String why)
    {
        final String said = client.getRemoteSocketAddress() + ": " + why;
        lastTlsRefusal = said;
        warnSometimes("rendezvous store: turned away {}", said);
    }

    /**
     * The last TLS handshake this store turned away, for the message of the ranks that did not arrive: the rank
     * behind it cannot join.
     *
     * @return the client's address and why, or null.
     */
    public String lastTlsRefusal()
    {
        return lastTlsRefusal;
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
                    else if (value == null)
                    {
                        out.writeByte(StoreProtocol.TIMEOUT);
                    }
                    else
                    {
                        out.writeByte(StoreProtocol.OK);
                        out.writeInt(value.length);
                        out.write(value);
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

    /**
     * The challenge: the client's nonce, this store's nonce and proof, the client's proof.
     *
     * @return whether the client proved the job key; it has been told either way.
     */
    private boolean challenge(
        final Socket client, final DataInputStream in, final DataOutputStream out, final boolean clearAtTlsStore)
        throws IOException
    {
        final int magic = in.readInt();
        final byte version = in.readByte();
        if (magic != StoreProtocol.MAGIC || version != StoreProtocol.VERSION)
        {
            warnSometimes("rendezvous store: {} is not an hccl client of this version (magic {}, version {}); closing",
                client.getRemoteSocketAddress(), Integer.toHexString(magic), version);
            return false;
        }
        final byte[] clientNonce = new byte[JobKey.NONCE_BYTES];
        in.readFully(clientNonce);
        // The client proves first: a stranger gets no proof to guess the token from offline.
        final byte[] serverNonce = JobKey.nonce();
        out.writeByte(clearAtTlsStore ? StoreProtocol.MODE_TLS_REQUIRED : StoreProtocol.MODE_CLEAR);
        out.write(serverNonce);
        out.flush();
        final byte[] proof = new byte[JobKey.PROOF_BYTES];
        in.readFully(proof);
        if (!key.verify(proof, StoreProtocol.CLIENT_ROLE, serverNonce, clientNonce))
        {
            warnSometimes("rendezvous store: {} does not know the job token; closing (a rank with another " +
                "HCCL_JOB_TOKEN, or a process that is not part of this job)", client.getRemoteSocketAddress());
            out.writeByte(StoreProtocol.REFUSED);
            out.flush();
            return false;
        }
        if (clearAtTlsStore)
        {
            tlsRefused(client, "it proved the job token without TLS");
            out.writeByte(StoreProtocol.TLS_REQUIRED);
            out.flush();
            giveUpForClearRank(client, in, out);
            return false;
        }
        out.writeByte(StoreProtocol.OK);
        out.write(key.prove(StoreProtocol.SERVER_ROLE, clientNonce, serverNonce));
        out.flush();
        return true;
    }

    /**
     * A rank of this job (it proved the key) came in the clear to a store that requires TLS: it can never join, so the
     * rendezvous is given up. The rank may say why in one {@link StoreProtocol#ABORT} (its TLS handshake failed: a
     * certificate was refused); if it closes instead, it has no TLS settings.
     */
    private void giveUpForClearRank(final Socket client, final DataInputStream in, final DataOutputStream out)
        throws IOException
    {
        try
        {
            if (in.readByte() == StoreProtocol.ABORT)
            {
                in.readUTF(); // the request's key, unused
                final ErrorCode error = Verdict.codeOf(in.readInt());
                final int concerned = in.readInt();
                abort(error, concerned, in.readUTF());
                out.writeByte(StoreProtocol.OK);
                out.flush();
                return;
            }
        }
        catch (final IOException ex)
        {
            LOG.debug("rendezvous store: {} left after TLS_REQUIRED: {}", client.getRemoteSocketAddress(),
                ex.toString());
        }
        finally
        {
            // The first verdict stands: after the rank's own ABORT, this one changes nothing.
            abort(ErrorCode.E_PARA, HcclException.UNKNOWN_RANK, "a rank at " +
                client.getInetAddress().getHostAddress() + " connected to rank 0's store without TLS, but the store " +
                "requires mutual TLS: set HCCL_TLS_CERT, HCCL_TLS_KEY and HCCL_TLS_CA on every rank, or on none");
        }
    }

    /**
     * Counts a connection into or out of the challenge.
     *
     * @return the count for its address now.
     */
    private int unproven(final Socket client, final int delta)
    {
        final Integer count = unproven.compute(client.getInetAddress(), (a, n) ->
        {
            final int next = (n == null ? 0 : n) + delta;
            return next <= 0 ? null : next;
        });
        return count == null ? 0 : count;
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

    private static void closeQuietly(final Socket socket)
    {
        try
        {
            socket.close();
        }
        catch (final IOException ignore)
        {
            // closing anyway
        }
    }

    private void refuse(final Socket client, final String why)
    {
        closeQuietly(client);
        warnSometimes("rendezvous store: turned away {}: {}", client.getRemoteSocketAddress(), why);
    }

    /** A WARN about a client turned away, at most one a second: a flood of them must not flood the log. */
    private void warnSometimes(final String format, final Object... args)
    {
        final long now = System.nanoTime();
        final long last = lastRefusalLog.get();
        if (now - last >= REFUSAL_LOG_NANOS && lastRefusalLog.compareAndSet(last, now))
        {
            LOG.warn(format, args);
        }
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
    private synchronized boolean set(final String key, final byte[] value)
    {
        final byte[] old = values.get(key);
        final long after = storedBytes + value.length + (old == null ? 2L * key.length() : -old.length);
        if (after > limits.maxStoredBytes() || (old == null && values.size() >= StoreProtocol.MAX_KEYS))
        {
            warnSometimes("rendezvous store: full ({} bytes in {} keys at most); refusing key {}",
                limits.maxStoredBytes(), StoreProtocol.MAX_KEYS, key);
            return false;
        }
        values.put(key, value);
        storedBytes = after;
        notifyAll();
        return true;
    }

    private synchronized byte[] get(final String key, final long timeoutMillis) throws InterruptedException
    {
        // A wait is bounded by the store's idle limit too: no rank waits longer for a key (the connect timeout), and
        // a client that asked for more (or for a value whose nanoseconds overflow) must not hold a thread beyond it.
        final long waitMillis = Math.min(Math.max(0, timeoutMillis), limits.idleMillis());
        final long deadline = System.nanoTime() + waitMillis * 1_000_000L;
        byte[] value;
        while ((value = values.get(key)) == null && !closed && aborted == null)
        {
            final long leftMillis = (deadline - System.nanoTime()) / 1_000_000L;
            if (leftMillis <= 0)
            {
                return null;
            }
            wait(leftMillis);
        }
        return value;
    }

    private synchronized Verdict aborted()
    {
        return aborted;
    }

    /**
     * Gives up the rendezvous: every waiting and later {@code get} of a missing key answers with the reason, so that
     * every rank reports the verdict instead of a lost connection. The first verdict stands.
     *
     * @param code   the error every rank reports.
     * @param rank   the rank the verdict concerns, or {@link HcclException#UNKNOWN_RANK}.
     * @param reason why, in words.
     */
    public synchronized void abort(final ErrorCode code, final int rank, final String reason)
    {
        if (aborted == null)
        {
            aborted = new Verdict(code, rank, reason);
            notifyAll();
        }
    }

    /**
     * Waits until every client has disconnected, at most {@code millis}: after an abort, so that they read it.
     *
     * @param millis the longest wait.
     */
    public void awaitClientsGone(final long millis)
    {
        final long deadline = System.nanoTime() + millis * 1_000_000L;
        while (!clients.isEmpty() && System.nanoTime() < deadline)
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

    private synchronized long add(final String key, final long delta) throws IOException
    {
        final byte[] old = values.get(key);
        final long sum;
        try
        {
            sum = (old == null ? 0 : Long.parseLong(new String(old, StandardCharsets.US_ASCII))) + delta;
        }
        catch (final NumberFormatException ex)
        {
            throw new IOException("add to key " + key + ", which holds no number");
        }
        if (!set(key, Long.toString(sum).getBytes(StandardCharsets.US_ASCII)))
        {
            throw new IOException("the store is full");
        }
        return sum;
    }

    private synchronized boolean contains(final String key)
    {
        return values.containsKey(key);
    }

    /**
     * Test hook: the bytes counted against {@link StoreLimits#maxStoredBytes()}.
     *
     * @return keys and values held, in bytes.
     */
    synchronized long storedBytes()
    {
        return storedBytes;
    }

    /**
     * Test hook: the keys held.
     *
     * @return how many.
     */
    synchronized int keyCount()
    {
        return values.size();
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
        synchronized (this)
        {
            notifyAll();
        }
    }
}

