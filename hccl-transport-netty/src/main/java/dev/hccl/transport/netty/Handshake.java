package dev.hccl.transport.netty;

import dev.hccl.api.spi.JobKey;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The handshake that opens every connection, in big-endian (network) byte order: a challenge in which each side
 * proves the job key ({@link JobKey}) over both sides' fresh nonces, so that the token never crosses the wire and a
 * recorded handshake is worthless in another connection. The dialer (the higher rank) sends HELLO:
 *
 * <pre>
 *  offset size field
 *   0     4    magic       0x4843434C ("HCCL")
 *   4     2    version     3
 *   6     8    commId      root communicator id
 *  14     4    rank        the dialer's rank
 *  18     4    worldSize
 *  22     2    connection  which of the pair's connections this is, 0 .. connections - 1
 *  24     2    connections how many connections the dialer opens to each peer
 *  26    16    nonce       the dialer's, fresh
 * </pre>
 *
 * The acceptor answers with a reply (below) of status CHALLENGE whose body is its own fresh nonce (16 bytes); the
 * dialer sends its proof over the fields and both nonces (32 bytes, {@link #dialerProof}); the acceptor checks it
 * and answers ACK, whose body is its own proof ({@link #acceptorProof}), which the dialer checks, or REJECT with the
 * reason and closes. The dialer proves first, so that a stranger gets no proof to test guessed tokens against. A
 * reply:
 *
 * <pre>
 *  offset size field
 *   0     4    magic      0x4843434C
 *   4     2    version    3
 *   6     1    status     ACK=0, REJECT=1, CHALLENGE=2
 *   7     4    rank       the acceptor's rank
 *  11     2    bodyLength 0 .. 1024
 *  13     n    body
 * </pre>
 */
final class Handshake
{
    /** First four bytes of HELLO and of the reply: "HCCL". */
    static final int MAGIC = 0x4843434C;
    /** The protocol version this code speaks. */
    static final short VERSION = 3;
    /** Bytes in HELLO. */
    static final int HELLO_LENGTH = 4 + 2 + 8 + 4 + 4 + 2 + 2 + JobKey.NONCE_BYTES;
    /** Bytes of the dialer's proof. */
    static final int PROOF_LENGTH = JobKey.PROOF_BYTES;
    /** Bytes of a CHALLENGE's body: the acceptor's nonce. */
    static final int CHALLENGE_BODY_LENGTH = JobKey.NONCE_BYTES;
    /** Bytes of an ACK's body: the acceptor's proof. */
    static final int ACK_BODY_LENGTH = JobKey.PROOF_BYTES;
    /** Bytes in a reply before its body. */
    static final int REPLY_FIXED_LENGTH = 4 + 2 + 1 + 4 + 2;
    /** Longest reply body accepted. */
    static final int REPLY_BODY_MAX = 1024;
    /** Reply status: accepted. */
    static final byte STATUS_ACK = 0;
    /** Reply status: refused, the body says why. */
    static final byte STATUS_REJECT = 1;
    /** Reply status: the acceptor's nonce; the dialer's proof is due. */
    static final byte STATUS_CHALLENGE = 2;

    private static final String ACCEPTOR_ROLE = "hccl-tcp-acceptor";
    private static final String DIALER_ROLE = "hccl-tcp-dialer";

    private final JobKey key;

    /**
     * Keys the handshake with a job token.
     *
     * @param jobToken the token every rank of the job shares.
     */
    Handshake(final String jobToken)
    {
        this.key = JobKey.of(jobToken);
    }

    /**
     * A decoded HELLO.
     *
     * @param version     protocol version.
     * @param commId      communicator id.
     * @param rank        the dialer's rank.
     * @param worldSize   its world size.
     * @param connection  which of the pair's connections this is.
     * @param connections how many connections the dialer opens to each peer.
     * @param nonce       the dialer's nonce.
     */
    record Hello(int version, long commId, int rank, int worldSize, int connection, int connections, byte[] nonce)
    {
    }

    /**
     * Encodes a HELLO.
     *
     * @param commId      communicator id.
     * @param rank        the dialer's rank.
     * @param worldSize   world size.
     * @param connection  which of the pair's connections this is.
     * @param connections how many connections the dialer opens to each peer.
     * @param nonce       a fresh nonce ({@link JobKey#nonce()}).
     * @return {@link #HELLO_LENGTH} bytes.
     */
    static byte[] encodeHello(
        final long commId, final int rank, final int worldSize, final int connection, final int connections,
        final byte[] nonce)
    {
        final ByteBuffer bb = ByteBuffer.allocate(HELLO_LENGTH);
        bb.putInt(MAGIC).putShort(VERSION).putLong(commId).putInt(rank).putInt(worldSize);
        bb.putShort((short)connection).putShort((short)connections).put(nonce);
        return bb.array();
    }

    /**
     * Decodes a HELLO; the magic is not checked here.
     *
     * @param bytes {@link #HELLO_LENGTH} bytes.
     * @return the fields.
     */
    static Hello decodeHello(final byte[] bytes)
    {
        final ByteBuffer bb = ByteBuffer.wrap(bytes);
        bb.getInt();
        final int version = bb.getShort() & 0xFFFF;
        final long commId = bb.getLong();
        final int rank = bb.getInt();
        final int worldSize = bb.getInt();
        final int connection = bb.getShort() & 0xFFFF;
        final int connections = bb.getShort() & 0xFFFF;
        final byte[] nonce = new byte[JobKey.NONCE_BYTES];
        bb.get(nonce);
        return new Hello(version, commId, rank, worldSize, connection, connections, nonce);
    }

    /**
     * The acceptor's proof, sent in its ACK.
     *
     * @param hello         the dialer's HELLO.
     * @param acceptorRank  the acceptor.
     * @param acceptorNonce the acceptor's fresh nonce.
     * @return {@link JobKey#PROOF_BYTES} bytes.
     */
    byte[] acceptorProof(final Hello hello, final int acceptorRank, final byte[] acceptorNonce)
    {
        return key.prove(ACCEPTOR_ROLE, fields(hello, acceptorRank), hello.nonce(), acceptorNonce);
    }

    /**
     * Whether an ACK's proof was made with this job's key.
     *
     * @param hello         the HELLO this dialer sent.
     * @param acceptorRank  the rank that answered.
     * @param acceptorNonce its nonce.
     * @param proof         its proof.
     * @return true when right.
     */
    boolean verifyAcceptor(final Hello hello, final int acceptorRank, final byte[] acceptorNonce, final byte[] proof)
    {
        return key.verify(proof, ACCEPTOR_ROLE, fields(hello, acceptorRank), hello.nonce(), acceptorNonce);
    }

    /**
     * The dialer's proof, the answer to the CHALLENGE.
     *
     * @param hello         the dialer's HELLO.
     * @param acceptorRank  the acceptor.
     * @param acceptorNonce the acceptor's nonce.
     * @return {@link #PROOF_LENGTH} bytes.
     */
    byte[] dialerProof(final Hello hello, final int acceptorRank, final byte[] acceptorNonce)
    {
        return key.prove(DIALER_ROLE, fields(hello, acceptorRank), acceptorNonce, hello.nonce());
    }

    /**
     * Whether the dialer's proof was made with this job's key, for this HELLO and this acceptor's nonce.
     *
     * @param hello         the HELLO received.
     * @param acceptorRank  this rank.
     * @param acceptorNonce the nonce this rank sent.
     * @param proof         the dialer's proof.
     * @return true when right.
     */
    boolean verifyDialer(final Hello hello, final int acceptorRank, final byte[] acceptorNonce, final byte[] proof)
    {
        return key.verify(proof, DIALER_ROLE, fields(hello, acceptorRank), acceptorNonce, hello.nonce());
    }

    /**
     * Encodes a reply into a new buffer.
     *
     * @param alloc  the allocator.
     * @param status {@link #STATUS_ACK}, {@link #STATUS_REJECT} or {@link #STATUS_CHALLENGE}.
     * @param rank   the acceptor's rank.
     * @param body   the body, at most {@link #REPLY_BODY_MAX} bytes.
     * @return the reply.
     */
    static ByteBuf encodeReply(final ByteBufAllocator alloc, final byte status, final int rank, final byte[] body)
    {
        final ByteBuf buf = alloc.buffer(REPLY_FIXED_LENGTH + body.length);
        buf.writeInt(MAGIC).writeShort(VERSION).writeByte(status).writeInt(rank).writeShort(body.length);
        buf.writeBytes(body);
        return buf;
    }

    /**
     * The body of a REJECT: the reason, cut to {@link #REPLY_BODY_MAX} bytes.
     *
     * @param reason why.
     * @return UTF-8 bytes.
     */
    static byte[] rejectBody(final String reason)
    {
        final byte[] bytes = reason.getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= REPLY_BODY_MAX)
        {
            return bytes;
        }
        final byte[] cut = new byte[REPLY_BODY_MAX];
        System.arraycopy(bytes, 0, cut, 0, REPLY_BODY_MAX);
        return cut;
    }

    /** The fields both proofs cover: a proof for one connection, pair or job is no proof for another. */
    private static byte[] fields(final Hello hello, final int acceptorRank)
    {
        final ByteBuffer bb = ByteBuffer.allocate(2 + 8 + 4 + 4 + 4 + 2 + 2);
        bb.putShort((short)hello.version()).putLong(hello.commId()).putInt(hello.rank()).putInt(acceptorRank);
        bb.putInt(hello.worldSize()).putShort((short)hello.connection()).putShort((short)hello.connections());
        return bb.array();
    }
}
