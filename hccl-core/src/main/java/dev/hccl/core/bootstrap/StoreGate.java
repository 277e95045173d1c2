package dev.hccl.core.bootstrap;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.JobKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PushbackInputStream;
import java.net.Socket;
import java.util.function.Supplier;

/**
 * The rendezvous store's door: how a new connection gets in ({@link StoreProtocol}). It reads the connection's first
 * byte: under TLS a handshake is layered over the socket, a store without TLS answers a ClientHello with a fatal alert,
 * and the first byte of the magic means the clear. Then the challenge: only a client that proves the job key is
 * admitted. A rank of the job in the clear at a store that requires TLS (no TLS settings, or a handshake that failed)
 * is never admitted, and gives the rendezvous up: a stranger, who cannot prove the key, cannot.
 */
final class StoreGate
{
    private static final Logger LOG = LoggerFactory.getLogger(StoreServer.class);

    /** Gives the rendezvous up (the store's {@code abort}). */
    @FunctionalInterface
    interface GiveUp
    {
        /**
         * Gives the rendezvous up; the first verdict stands.
         *
         * @param code   the error every rank reports.
         * @param rank   the rank concerned, or {@link HcclException#UNKNOWN_RANK}.
         * @param reason why.
         */
        void abort(ErrorCode code, int rank, String reason);
    }

    /**
     * An admitted client's streams.
     *
     * @param in  what it sends, after the challenge.
     * @param out what it is sent.
     */
    record Admitted(DataInputStream in, DataOutputStream out)
    {
    }

    /** What became of a client that proved the key. */
    enum Seat
    {
        /** It is admitted. */
        TAKEN,
        /** Its challenge's deadline closed it first. */
        LATE,
        /** As many clients as the store serves are admitted already: it is told to try again. */
        FULL
    }

    private final JobKey key;
    /** Mutual TLS for every client, or null for the clear. */
    private final SSLContext tls;
    private final RefusalLog refusals;
    private final GiveUp giveUp;
    private final GuessPacer guesses;

    StoreGate(final JobKey key, final SSLContext tls, final RefusalLog refusals, final GiveUp giveUp,
        final GuessPacer guesses)
    {
        this.guesses = guesses;
        this.key = key;
        this.tls = tls;
        this.refusals = refusals;
        this.giveUp = giveUp;
    }

    /**
     * Lets a client in, or tells it why not.
     *
     * @param client a connection just accepted; the caller bounds the time this takes.
     * @param seat   asked once the client has proven the key, before it is told so: whether it is admitted (its
     *               challenge ended within the caller's deadline, which then no longer closes the connection, and
     *               there is room).
     * @return its streams, or null when it was turned away.
     * @throws IOException when the connection fails.
     */
    Admitted admit(final Socket client, final Supplier<Seat> seat) throws IOException
    {
        final Socket secured = open(client);
        if (secured == null)
        {
            return null;
        }
        final DataInputStream in = new DataInputStream(secured == client ? clearStream(client) :
            new BufferedInputStream(secured.getInputStream()));
        final DataOutputStream out = new DataOutputStream(new BufferedOutputStream(secured.getOutputStream()));
        return challenge(client, in, out, secured != client, tls != null && secured == client, seat) ?
            new Admitted(in, out) : null;
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
                refusals.warn("rendezvous store: {} is not an hccl client (first byte 0x{}); closing",
                    client.getRemoteSocketAddress(), Integer.toHexString(first));
            }
            return null;
        }
        if (tls == null)
        {
            refusals.rankLike(client, "it opened a TLS handshake, but this store does not use TLS (rank 0 has no " +
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
            refusals.rankLike(client, "its TLS handshake failed: " + ex.getMessage());
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

    /**
     * The challenge: the client's nonce, this store's nonce and proof, the client's proof.
     *
     * @return whether the client proved the job key; it has been told either way.
     */
    private boolean challenge(
        final Socket client, final DataInputStream in, final DataOutputStream out, final boolean certified,
        final boolean clearAtTlsStore, final Supplier<Seat> seat)
        throws IOException
    {
        final int magic = in.readInt();
        final byte version = in.readByte();
        if (magic != StoreProtocol.MAGIC || version != StoreProtocol.VERSION)
        {
            refusals.warn("rendezvous store: {} is not an hccl client of this version (magic {}, version {}); closing",
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
        final boolean proven = key.verify(proof, StoreProtocol.CLIENT_ROLE, serverNonce, clientNonce);
        if (clearAtTlsStore)
        {
            // Every client in the clear hears the same, its proof right or wrong, and as late (each counts as a
            // guess): what it hears tells a stranger nothing of its guess. Only a rank of the job gives the
            // rendezvous up, so that every rank hears at once that one of them has no TLS settings.
            pace(client);
            refusals.rankLike(client, "it came in the clear, but the store requires mutual TLS");
            out.writeByte(StoreProtocol.TLS_REQUIRED);
            out.flush();
            clearRankLeaves(client, in, out, proven);
            return false;
        }
        if (!proven)
        {
            pace(client);
            out.writeByte(StoreProtocol.REFUSED);
            out.flush();
            refusedToken(client, certified);
            return false;
        }
        switch (seat.get())
        {
            case LATE:
                return false; // closed by the deadline: the client sees the connection end, and tries again
            case FULL:
                out.writeByte(StoreProtocol.FULL);
                out.flush();
                return false;
            default:
                break;
        }
        out.writeByte(StoreProtocol.OK);
        out.write(key.prove(StoreProtocol.SERVER_ROLE, clientNonce, serverNonce));
        out.flush();
        return true;
    }

    /** Waits before a wrong proof's answer, as long as its address's guesses call for ({@link GuessPacer}). */
    private void pace(final Socket client)
    {
        final long millis = guesses.failed(client.getInetAddress(), System.nanoTime());
        if (millis > 0)
        {
            try
            {
                Thread.sleep(millis);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * A client proved another job token. Where that cannot be a stranger's doing, the rendezvous is given up at once,
     * naming the variable: when the client holds a certificate of the job's CA (mutual TLS), or when rank 0 has no
     * token and no TLS (anyone may then prove its public key and give the rendezvous up, so giving up here grants a
     * stranger nothing). Otherwise it may be a stranger, who must not be able to end a job: the refusal is
     * remembered, and the ranks that wait name it when they give up ({@code HCCL_CONNECT_TIMEOUT}).
     */
    private void refusedToken(final Socket client, final boolean certified)
    {
        if (!certified && (tls != null || !key.isPublic()))
        {
            refusals.rankLike(client, "it does not know the job token (a rank with another HCCL_JOB_TOKEN or none, " +
                "or a process that is not part of this job)");
            return;
        }
        final String which = key.isPublic() ? "has HCCL_JOB_TOKEN set, and rank 0 has none" :
            "has another HCCL_JOB_TOKEN than rank 0, or none";
        refusals.rankLike(client, "it " + (certified ? "holds a certificate of the job's CA, but " : "") + which);
        giveUp.abort(ErrorCode.E_PARA, HcclException.UNKNOWN_RANK, "a rank at " +
            client.getInetAddress().getHostAddress() + (certified ? " (its certificate is of the job's HCCL_TLS_CA) " :
            " ") + which + ": set the same HCCL_JOB_TOKEN on every rank, or on none");
    }

    /**
     * A client came in the clear to a store that requires TLS and was told so. When it proved the key, it is a rank of
     * this job that can never join, so the rendezvous is given up; the rank may say why in one
     * {@link StoreProtocol#ABORT} (its TLS handshake failed: a certificate was refused); if it closes instead, it has
     * no TLS settings. A client that did not prove the key is answered alike, and changes nothing.
     */
    private void clearRankLeaves(final Socket client, final DataInputStream in, final DataOutputStream out,
        final boolean proven) throws IOException
    {
        try
        {
            if (in.readByte() == StoreProtocol.ABORT)
            {
                in.readUTF(); // the request's key, unused
                final ErrorCode error = Verdict.codeOf(in.readInt());
                final int concerned = in.readInt();
                final String reason = in.readUTF();
                if (proven)
                {
                    giveUp.abort(error, concerned, reason);
                }
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
            if (proven)
            {
                giveUp.abort(ErrorCode.E_PARA, HcclException.UNKNOWN_RANK, "a rank at " +
                    client.getInetAddress().getHostAddress() + " connected to rank 0's store without TLS, but the " +
                    "store requires mutual TLS: set HCCL_TLS_CERT, HCCL_TLS_KEY and HCCL_TLS_CA on every rank, or on none");
            }
        }
    }
}
