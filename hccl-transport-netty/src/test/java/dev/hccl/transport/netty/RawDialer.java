package dev.hccl.transport.netty;

import dev.hccl.api.spi.JobKey;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Test support: the dialer's side of the handshake over a raw socket, as a peer written by hand would speak it.
 */
final class RawDialer
{
    /** A reply as read: its status, the acceptor's rank and the body. */
    record Reply(byte status, int rank, byte[] body)
    {
        String text()
        {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    private final Socket socket;
    private final Handshake handshake;
    private final Handshake.Hello hello;
    /** The proof this peer sent, as an eavesdropper would record it. */
    private byte[] sent;
    private byte[] acceptorNonce;

    /**
     * Sends a HELLO of the cluster's communicator.
     *
     * @param socket    connected to the acceptor.
     * @param token     the job token this peer claims to know.
     * @param rank      the rank it claims.
     * @param worldSize the world size it claims.
     */
    RawDialer(final Socket socket, final String token, final int rank, final int worldSize) throws IOException
    {
        this(socket, token, rank, worldSize, JobKey.nonce());
    }

    /**
     * Sends a HELLO with a given nonce, as a replay would.
     *
     * @param socket    connected to the acceptor.
     * @param token     the job token this peer claims to know.
     * @param rank      the rank it claims.
     * @param worldSize the world size it claims.
     * @param nonce     the dialer's nonce.
     */
    RawDialer(final Socket socket, final String token, final int rank, final int worldSize, final byte[] nonce)
        throws IOException
    {
        this(socket, token, rank, worldSize, 0, 1, nonce);
    }

    /**
     * Sends a HELLO for one of several connections, as a rank set up with that many would.
     *
     * @param socket      connected to the acceptor.
     * @param token       the job token this peer claims to know.
     * @param rank        the rank it claims.
     * @param worldSize   the world size it claims.
     * @param connection  which of the pair's connections this is.
     * @param connections how many connections it opens to each peer.
     * @param nonce       the dialer's nonce.
     */
    RawDialer(
        final Socket socket, final String token, final int rank, final int worldSize, final int connection,
        final int connections, final byte[] nonce) throws IOException
    {
        this.socket = socket;
        this.handshake = new Handshake(token);
        final byte[] bytes = Handshake.encodeHello(Cluster.COMM_ID, rank, worldSize, connection, connections, nonce);
        this.hello = Handshake.decodeHello(bytes);
        socket.getOutputStream().write(bytes);
        socket.getOutputStream().flush();
    }

    /**
     * Reads the CHALLENGE and sends this peer's proof followed by {@code trailing}.
     *
     * @param trailing bytes to send right behind the proof, in the same write.
     */
    void prove(final byte[] trailing) throws IOException
    {
        final Reply challenge = read(socket);
        assertEquals(Handshake.STATUS_CHALLENGE, challenge.status(), challenge.text());
        assertEquals(Handshake.CHALLENGE_BODY_LENGTH, challenge.body().length);
        acceptorNonce = challenge.body();
        send(handshake.dialerProof(hello, challenge.rank(), acceptorNonce), trailing);
    }

    /**
     * Reads the CHALLENGE and answers it with a proof of its own making, not checking the acceptor's.
     *
     * @param proof what to send as the proof.
     */
    void answer(final byte[] proof) throws IOException
    {
        final Reply challenge = read(socket);
        assertEquals(Handshake.STATUS_CHALLENGE, challenge.status(), challenge.text());
        send(proof, new byte[0]);
    }

    /** @return the HELLO's nonce. */
    byte[] nonce()
    {
        return hello.nonce();
    }

    /** @return the proof this peer sent. */
    byte[] sentProof()
    {
        return sent;
    }

    private void send(final byte[] proof, final byte[] trailing) throws IOException
    {
        sent = proof.clone();
        final byte[] both = Arrays.copyOf(proof, proof.length + trailing.length);
        System.arraycopy(trailing, 0, both, proof.length, trailing.length);
        final OutputStream out = socket.getOutputStream();
        out.write(both);
        out.flush();
    }

    /**
     * @return the verdict that follows the proof.
     */
    Reply verdict() throws IOException
    {
        return read(socket);
    }

    /**
     * The whole handshake, expecting ACK.
     *
     * @param trailing bytes to send right behind the proof.
     */
    void handshake(final byte[] trailing) throws IOException
    {
        prove(trailing);
        final Reply ack = verdict();
        assertEquals(Handshake.STATUS_ACK, ack.status(), ack.text());
        assertTrue(handshake.verifyAcceptor(hello, ack.rank(), acceptorNonce, ack.body()),
            "the acceptor proves the key");
    }

    /**
     * Reads one reply.
     *
     * @param socket the connection.
     * @return the reply.
     */
    static Reply read(final Socket socket) throws IOException
    {
        final DataInputStream din = new DataInputStream(socket.getInputStream());
        assertEquals(Handshake.MAGIC, din.readInt());
        assertEquals(Handshake.VERSION, din.readShort());
        final byte status = din.readByte();
        final int rank = din.readInt();
        final byte[] body = new byte[din.readUnsignedShort()];
        din.readFully(body);
        return new Reply(status, rank, body);
    }
}
