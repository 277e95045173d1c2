package dev.hccl.core.bootstrap;

import dev.hccl.api.CommConfig;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.JobKey;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A connection to the rendezvous store, which first passes the store's challenge ({@link StoreProtocol}): each side
 * proves the job key to the other over fresh nonces. Not thread-safe: one per rank, used while the communicator is
 * created.
 */
public final class StoreClient implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(StoreClient.class);

    private static final long REPLY_SLACK_MILLIS = 5_000;
    private static final String TLS_SETTINGS = "HCCL_TLS_CERT, HCCL_TLS_KEY and HCCL_TLS_CA";

    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private final int rank;
    private final long deadlineNanos;
    /** The store requires TLS and this client came in the clear: it cannot join. */
    private final boolean tlsRequired;

    /**
     * Passes the store's challenge. A store that requires TLS answers a client in the clear that proves the key with
     * {@link #tlsRequired}; such a client may then only give the rendezvous up, with {@link #abort} or by closing.
     */
    private StoreClient(final Socket socket, final int rank, final long deadlineNanos, final JobKey key)
        throws IOException
    {
        this.socket = socket;
        this.rank = rank;
        this.deadlineNanos = deadlineNanos;
        in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
        out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
        bound();
        final byte[] clientNonce = JobKey.nonce();
        out.writeInt(StoreProtocol.MAGIC);
        out.writeByte(StoreProtocol.VERSION);
        out.write(clientNonce);
        out.flush();
        try
        {
            in.readByte(); // the store's mode: whether it requires TLS, which its status says again after the proofs
        }
        catch (final EOFException | SocketException ex)
        {
            throw new StoreConnectAttempts.TurnedAway(false, ex);
        }
        final byte[] serverNonce = new byte[JobKey.NONCE_BYTES];
        in.readFully(serverNonce);
        out.write(key.prove(StoreProtocol.CLIENT_ROLE, serverNonce, clientNonce));
        out.flush();
        final byte status = in.readByte();
        tlsRequired = status == StoreProtocol.TLS_REQUIRED;
        if (tlsRequired)
        {
            return;
        }
        if (status == StoreProtocol.FULL)
        {
            throw new StoreConnectAttempts.TurnedAway(true, null);
        }
        if (status != StoreProtocol.OK)
        {
            throw notOurStore("refused this rank's proof of the job token");
        }
        final byte[] proof = new byte[JobKey.PROOF_BYTES];
        in.readFully(proof);
        if (!key.verify(proof, StoreProtocol.SERVER_ROLE, clientNonce, serverNonce))
        {
            throw notOurStore("does not know this job's token");
        }
    }

    private HcclException notOurStore(final String what)
    {
        return new HcclException(ErrorCode.E_PARA, rank, 0, Operation.INIT, HcclException.NO_SEQUENCE,
            "the rendezvous store at " + socket.getRemoteSocketAddress() + " " + what + ": " + CommConfig.JOB_TOKEN +
            " differs from rank 0's (or is set on some ranks only), or another job's store listens there", null);
    }

    /**
     * Connects, retrying while the store is not up yet (rank 0 may start last), until the deadline.
     *
     * @param address       the store.
     * @param rank          this rank, for messages.
     * @param deadlineNanos a {@link System#nanoTime()} value.
     * @param key           the job key to prove, and to expect the store to prove.
     * @return the client.
     * @throws HcclException E_TCP_CONNECT when the store cannot be reached in time; E_PARA when it does not know the
     *                       job token, or this rank's is not rank 0's.
     */
    public static StoreClient connect(
        final InetSocketAddress address, final int rank, final long deadlineNanos, final JobKey key)
    {
        return connect(address, rank, deadlineNanos, key, null);
    }

    /**
     * Connects to the store, over mutual TLS when {@code tls} is given, retrying until it answers or the deadline.
     *
     * @param address       the store.
     * @param rank          this rank, for messages.
     * @param deadlineNanos when to give up.
     * @param key           the job key to prove.
     * @param tls           the TLS context, or null for plain TCP.
     * @return the connected, authenticated client.
     */
    public static StoreClient connect(
        final InetSocketAddress address, final int rank, final long deadlineNanos, final JobKey key,
        final SSLContext tls)
    {
        long backoffMillis = 20;
        final StoreConnectAttempts attempts = new StoreConnectAttempts();
        final WaitReport report = new WaitReport(deadlineNanos);
        while (System.nanoTime() < deadlineNanos)
        {
            if (attempts.last() != null && report.due())
            {
                LOG.info("rank {}: rank 0's rendezvous store at {} does not answer yet ({}); {}", rank, address,
                    attempts.last().getMessage(), report.left());
            }
            final Socket socket;
            try
            {
                socket = tls == null ? new Socket() : tls.getSocketFactory().createSocket();
            }
            catch (final IOException ex)
            {
                throw new HcclException(ErrorCode.E_ENV, "cannot make a TLS socket: " + ex, ex);
            }
            try
            {
                final long left = Math.max(1, (deadlineNanos - System.nanoTime()) / 1_000_000L);
                socket.connect(address, (int)Math.min(left, 10_000));
                socket.setTcpNoDelay(true);
                final StoreClient client = new StoreClient(socket, rank, deadlineNanos, key);
                if (client.tlsRequired)
                {
                    client.close(); // the store gives the rendezvous up when this rank leaves
                    throw new HcclException(ErrorCode.E_PARA, rank, 0, Operation.INIT, HcclException.NO_SEQUENCE,
                        "rank 0's rendezvous store at " + address + " requires mutual TLS, and this rank has no " +
                        TLS_SETTINGS + ": set them on every rank, or on none", null);
                }
                return client;
            }
            catch (final HcclException ex)
            {
                close(socket);
                throw ex;
            }
            catch (final SSLException ex)
            {
                close(socket);
                if (!closedMidHandshake(ex))
                {
                    throw tlsFailure(address, rank, deadlineNanos, key, ex);
                }
                // closed before TLS began (the store made room for newer connections, say): retried
                attempts.failed(new StoreConnectAttempts.TurnedAway(false, ex));
            }
            catch (final IOException ex)
            {
                attempts.failed(ex);
                try
                {
                    socket.close();
                }
                catch (final IOException ignore)
                {
                    // retrying
                }
            }
            try
            {
                Thread.sleep(Math.min(backoffMillis, Math.max(1, (deadlineNanos - System.nanoTime()) / 1_000_000L)));
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                break;
            }
            backoffMillis = Math.min(1000, backoffMillis * 2);
        }
        throw attempts.gaveUp(address, rank, tls != null);
    }

    /**
     * Whether a TLS handshake failed only because the store closed the connection, as it does to a client it turns
     * away before TLS begins (too many connections): that is retried, while an alert or a certificate that does not
     * verify never gets better.
     */
    private static boolean closedMidHandshake(final SSLException ex)
    {
        for (Throwable t = ex.getCause(); t != null; t = t.getCause())
        {
            if (t instanceof EOFException || t instanceof SocketException)
            {
                return true;
            }
        }
        return false;
    }

    /**
     * A TLS handshake with the store failed for good. This rank tells the store in the clear, proving the job key, so
     * that every rank fails now with the reason, not at the connect timeout: a store that speaks the clear means that
     * rank 0 does not use TLS; one that requires TLS refused this rank's certificate, or this rank refused its.
     */
    private static HcclException tlsFailure(
        final InetSocketAddress address, final int rank, final long deadlineNanos, final JobKey key,
        final SSLException ex)
    {
        final String clearStore = "rank " + rank + " uses TLS (" + TLS_SETTINGS + "), but rank 0's rendezvous store " +
            "at " + address + " does not: set them on every rank, or on none";
        final String refused = "rank " + rank + "'s TLS handshake with rank 0's rendezvous store at " + address +
            " failed (" + ex.getMessage() + "): the store refused this rank's certificate, or this rank does not " +
            "trust the store's. Check that every rank's HCCL_TLS_CERT is signed by the CA in every rank's " +
            "HCCL_TLS_CA and has not expired";
        final Socket plain = new Socket();
        try
        {
            plain.connect(address, (int)Math.max(1, Math.min(10_000, (deadlineNanos - System.nanoTime()) / 1_000_000L)));
            final StoreClient client = new StoreClient(plain, rank, deadlineNanos, key);
            final String why = client.tlsRequired ? refused : clearStore;
            try (client)
            {
                client.abort(ErrorCode.E_PARA, rank, why);
            }
            return new HcclException(ErrorCode.E_PARA, rank, 0, Operation.INIT, HcclException.NO_SEQUENCE, why, ex);
        }
        catch (final IOException | HcclException notOurs)
        {
            close(plain);
            LOG.debug("rank {}: could not tell the store at {} in the clear: {}", rank, address, notOurs.toString());
        }
        return new HcclException(ErrorCode.E_PARA, rank, 0, Operation.INIT, HcclException.NO_SEQUENCE, refused, ex);
    }

    /**
     * The local address of the connection to the store: the interface that routes to rank 0.
     *
     * @return the address.
     */
    public InetAddress localAddress()
    {
        return socket.getLocalAddress();
    }

    /**
     * Sets a key.
     *
     * @param key   the key.
     * @param value the value.
     */
    public void set(final String key, final byte[] value)
    {
        try
        {
            bound();
            out.writeByte(StoreProtocol.SET);
            out.writeUTF(key);
            out.writeInt(value.length);
            out.write(value);
            out.flush();
            final byte status = in.readByte();
            if (status == StoreProtocol.FULL)
            {
                throw new HcclException(ErrorCode.E_INTERNAL, rank, 0, Operation.INIT, HcclException.NO_SEQUENCE,
                    "rank 0's rendezvous store is full and refused key " + key + ": more ranks or records than a " +
                    "job's store holds (StoreLimits)", null);
            }
            expectOk(status);
        }
        catch (final IOException ex)
        {
            throw lost(ex);
        }
    }

    /**
     * Sets a key to a string.
     *
     * @param key   the key.
     * @param value the value.
     */
    public void set(final String key, final String value)
    {
        set(key, value.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Waits for a key.
     *
     * @param key           the key.
     * @param deadlineNanos a {@link System#nanoTime()} value.
     * @return the value, or null when the deadline passed first.
     */
    public byte[] get(final String key, final long deadlineNanos)
    {
        try
        {
            bound();
            out.writeByte(StoreProtocol.GET);
            out.writeUTF(key);
            out.writeLong(Math.max(0, (deadlineNanos - System.nanoTime()) / 1_000_000L));
            out.flush();
            final byte status = in.readByte();
            if (status == StoreProtocol.ABORTED)
            {
                final ErrorCode code = Verdict.codeOf(in.readInt());
                final int concerned = in.readInt();
                final String reason = in.readUTF();
                heard();
                throw new HcclException(code, rank, concerned, Operation.INIT, HcclException.NO_SEQUENCE,
                    "the rendezvous was given up: " + reason, null);
            }
            return valueAfter(status);
        }
        catch (final IOException ex)
        {
            throw lost(ex);
        }
    }

    /**
     * The job's status, as rank 0's communicator reports it ({@code hccl-status}).
     *
     * @return UTF-8 JSON, or null when the communicator is not made yet (or no longer serves it).
     */
    public byte[] status()
    {
        try
        {
            bound();
            out.writeByte(StoreProtocol.STATUS);
            out.writeUTF("");
            out.flush();
            return valueAfter(in.readByte());
        }
        catch (final IOException ex)
        {
            throw lost(ex);
        }
    }

    /**
     * Waits for a key holding a string.
     *
     * @param key           the key.
     * @param deadlineNanos a {@link System#nanoTime()} value.
     * @return the value, or null when the deadline passed first.
     */
    public String getString(final String key, final long deadlineNanos)
    {
        final byte[] value = get(key, deadlineNanos);
        return value == null ? null : new String(value, StandardCharsets.UTF_8);
    }

    /**
     * Adds to a counter atomically.
     *
     * @param key   the counter.
     * @param delta the increment.
     * @return the new value.
     */
    public long add(final String key, final long delta)
    {
        try
        {
            bound();
            out.writeByte(StoreProtocol.ADD);
            out.writeUTF(key);
            out.writeLong(delta);
            out.flush();
            return in.readLong();
        }
        catch (final IOException ex)
        {
            throw lost(ex);
        }
    }

    /**
     * Gives the rendezvous up for every rank: their waits for a missing key, and their later ones, fail with this
     * error. The first verdict stands.
     *
     * @param code      the error every rank reports.
     * @param concerned the rank it concerns, or {@link HcclException#UNKNOWN_RANK}.
     * @param reason    why, in words, saying what to change.
     */
    public void abort(final ErrorCode code, final int concerned, final String reason)
    {
        try
        {
            bound();
            out.writeByte(StoreProtocol.ABORT);
            out.writeUTF("");
            out.writeInt(code.code());
            out.writeInt(concerned);
            out.writeUTF(reason);
            out.flush();
            expectOk(in.readByte());
        }
        catch (final IOException ex)
        {
            throw lost(ex);
        }
        heard();
    }

    /**
     * Tells the store that this rank knows the rendezvous was given up, so that rank 0 need not keep its store up for
     * this rank ({@link StoreServer#closeOnceVerdictHeard}). Best effort: a store that is gone needs no telling.
     */
    private void heard()
    {
        if (tlsRequired)
        {
            return; // a client the store did not admit may only abort
        }
        try
        {
            bound();
            out.writeByte(StoreProtocol.SET);
            out.writeUTF(StoreProtocol.HEARD_PREFIX + rank);
            out.writeInt(0);
            out.flush();
            in.readByte();
        }
        catch (final IOException ex)
        {
            LOG.debug("rank {}: could not tell the store it heard the verdict: {}", rank, ex.toString());
        }
    }

    /**
     * Which of the keys are missing.
     *
     * @param keys the keys.
     * @return the indices of the keys not set, ascending.
     */
    public List<Integer> missing(final List<String> keys)
    {
        try
        {
            bound();
            out.writeByte(StoreProtocol.CHECK);
            out.writeUTF("");
            out.writeInt(keys.size());
            for (final String key : keys)
            {
                out.writeUTF(key);
            }
            out.flush();
            final int n = in.readInt();
            final List<Integer> missing = new ArrayList<>();
            for (int i = 0; i < n; i++)
            {
                if (!in.readBoolean())
                {
                    missing.add(i);
                }
            }
            return missing;
        }
        catch (final IOException ex)
        {
            throw lost(ex);
        }
    }

    /**
     * Bounds the next reply by the rendezvous deadline (plus slack for the store's own wait), so that a rank 0 that
     * hangs without closing its socket cannot hang every other rank's init.
     */
    private void bound() throws IOException
    {
        final long leftMillis = (deadlineNanos - System.nanoTime()) / 1_000_000L;
        socket.setSoTimeout((int)Math.max(1, Math.min(Integer.MAX_VALUE, leftMillis + REPLY_SLACK_MILLIS)));
    }

    /** The value that follows an {@code OK}, as the store's {@code answer} writes it; null after any other status. */
    private byte[] valueAfter(final byte status) throws IOException
    {
        if (status != StoreProtocol.OK)
        {
            return null;
        }
        final int length = in.readInt();
        if (length < 0 || length > StoreProtocol.MAX_VALUE_BYTES)
        {
            throw new IOException("bad value length " + length);
        }
        final byte[] value = new byte[length];
        in.readFully(value);
        return value;
    }

    private void expectOk(final byte status) throws IOException
    {
        if (status != StoreProtocol.OK)
        {
            throw new IOException("store answered " + status);
        }
    }

    private HcclException lost(final IOException ex)
    {
        return new HcclException(ErrorCode.E_TCP_CONNECT, rank, 0, Operation.INIT, HcclException.NO_SEQUENCE,
            "lost the connection to rank 0's rendezvous store at " + socket.getRemoteSocketAddress() +
            " (did rank 0 fail?): " + ex, ex);
    }

    @Override
    public void close()
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

    private static void close(final Socket socket)
    {
        try
        {
            socket.close();
        }
        catch (final IOException ignore)
        {
            // failing anyway
        }
    }
}
