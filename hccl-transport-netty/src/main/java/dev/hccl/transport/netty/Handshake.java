package dev.hccl.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The handshake that opens every connection, in big-endian (network) byte order. The dialer (the higher rank) sends
 * HELLO:
 *
 * <pre>
 *  offset size field
 *   0     4    magic      0x4843434C ("HCCL")
 *   4     2    version    2
 *   6     8    commId     root communicator id
 *  14     4    rank       the dialer's rank
 *  18     4    worldSize
 *  22     2    connection which of the pair's connections this is, 0 .. connections - 1
 *  24     2    connections how many connections the dialer opens to each peer
 *  26    32    mac        HMAC-SHA256(key, "HCCL-HELLO" version commId rank worldSize connection connections)
 * </pre>
 *
 * The acceptor replies, and closes the connection after a REJECT:
 *
 * <pre>
 *  offset size field
 *   0     4    magic      0x4843434C
 *   4     2    version    2
 *   6     1    status     ACK=0, REJECT=1
 *   7     4    rank       the acceptor's rank
 *  11     2    bodyLength 0 .. 1024
 *  13     n    body       ACK: HMAC-SHA256(key, "HCCL-ACK" version commId acceptorRank dialerRank worldSize
 *                              connection);
 *                         REJECT: the reason, UTF-8
 * </pre>
 *
 * The key is SHA-256 of the job token's UTF-8 bytes, so the token never crosses the wire; HELLO and ACK each prove
 * that their sender knows it. There is no nonce, so a recorded HELLO can be replayed: the token keeps out mistaken
 * jobs and casual connections, not an attacker who can watch the network.
 */
final class Handshake
{
    /** First four bytes of HELLO and of the reply: "HCCL". */
    static final int MAGIC = 0x4843434C;
    /** The protocol version this code speaks. */
    static final short VERSION = 2;
    /** Bytes of an HMAC-SHA256. */
    static final int MAC_LENGTH = 32;
    /** Bytes in HELLO. */
    static final int HELLO_LENGTH = 4 + 2 + 8 + 4 + 4 + 2 + 2 + MAC_LENGTH;
    /** Bytes in a reply before its body. */
    static final int REPLY_FIXED_LENGTH = 4 + 2 + 1 + 4 + 2;
    /** Longest reply body accepted. */
    static final int REPLY_BODY_MAX = 1024;
    /** Reply status: accepted. */
    static final byte STATUS_ACK = 0;
    /** Reply status: refused, the body says why. */
    static final byte STATUS_REJECT = 1;

    private static final String MAC_ALGORITHM = "HmacSHA256";
    private static final byte[] HELLO_DOMAIN = "HCCL-HELLO".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ACK_DOMAIN = "HCCL-ACK".getBytes(StandardCharsets.US_ASCII);

    private final SecretKeySpec key;

    /**
     * Keys the handshake with a job token.
     *
     * @param jobToken the token every rank of the job shares.
     */
    Handshake(final String jobToken)
    {
        try
        {
            // Hashing first gives a fixed-length, never-empty key (an empty token would be an invalid HMAC key).
            final byte[] digest = MessageDigest.getInstance("SHA-256").digest(jobToken.getBytes(StandardCharsets.UTF_8));
            key = new SecretKeySpec(digest, MAC_ALGORITHM);
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IllegalStateException("SHA-256 is not available", ex);
        }
    }

    /**
     * A decoded HELLO.
     *
     * @param version   protocol version.
     * @param commId    communicator id.
     * @param rank      the dialer's rank.
     * @param worldSize   its world size.
     * @param connection  which of the pair's connections this is.
     * @param connections how many connections the dialer opens to each peer.
     * @param mac         its authenticator.
     */
    record Hello(int version, long commId, int rank, int worldSize, int connection, int connections, byte[] mac)
    {
    }

    /**
     * Encodes a HELLO.
     *
     * @param commId    communicator id.
     * @param rank      the dialer's rank.
     * @param worldSize   world size.
     * @param connection  which of the pair's connections this is.
     * @param connections how many connections the dialer opens to each peer.
     * @return {@link #HELLO_LENGTH} bytes.
     */
    byte[] encodeHello(
        final long commId, final int rank, final int worldSize, final int connection, final int connections)
    {
        final ByteBuffer bb = ByteBuffer.allocate(HELLO_LENGTH);
        bb.putInt(MAGIC).putShort(VERSION).putLong(commId).putInt(rank).putInt(worldSize);
        bb.putShort((short)connection).putShort((short)connections);
        bb.put(helloMac(VERSION, commId, rank, worldSize, connection, connections));
        return bb.array();
    }

    /**
     * Encodes the HELLO of a pair's only connection.
     *
     * @param commId    communicator id.
     * @param rank      the dialer's rank.
     * @param worldSize world size.
     * @return {@link #HELLO_LENGTH} bytes.
     */
    byte[] encodeHello(final long commId, final int rank, final int worldSize)
    {
        return encodeHello(commId, rank, worldSize, 0, 1);
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
        final byte[] mac = new byte[MAC_LENGTH];
        bb.get(mac);
        return new Hello(version, commId, rank, worldSize, connection, connections, mac);
    }

    /**
     * Whether a HELLO was made with the same job token.
     *
     * @param hello a decoded HELLO.
     * @return true when its authenticator is right.
     */
    boolean verify(final Hello hello)
    {
        // Constant-time comparison: the MAC must not be guessable byte by byte from timing.
        return MessageDigest.isEqual(
            helloMac(hello.version(), hello.commId(), hello.rank(), hello.worldSize(), hello.connection(),
                hello.connections()),
            hello.mac());
    }

    /**
     * The authenticator of an ACK.
     *
     * @param commId       communicator id.
     * @param acceptorRank the acceptor.
     * @param dialerRank   the dialer.
     * @param worldSize    world size.
     * @param connection   which of the pair's connections.
     * @return {@link #MAC_LENGTH} bytes.
     */
    byte[] ackMac(
        final long commId, final int acceptorRank, final int dialerRank, final int worldSize, final int connection)
    {
        final ByteBuffer bb = ByteBuffer.allocate(ACK_DOMAIN.length + 2 + 8 + 4 + 4 + 4 + 2);
        bb.put(ACK_DOMAIN).putShort(VERSION).putLong(commId).putInt(acceptorRank).putInt(dialerRank).putInt(worldSize);
        bb.putShort((short)connection);
        return mac(bb.array());
    }

    /**
     * Encodes a reply into a new buffer.
     *
     * @param alloc  the allocator.
     * @param status {@link #STATUS_ACK} or {@link #STATUS_REJECT}.
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

    private byte[] helloMac(
        final int version, final long commId, final int rank, final int worldSize, final int connection,
        final int connections)
    {
        final ByteBuffer bb = ByteBuffer.allocate(HELLO_DOMAIN.length + 2 + 8 + 4 + 4 + 2 + 2);
        bb.put(HELLO_DOMAIN).putShort((short)version).putLong(commId).putInt(rank).putInt(worldSize);
        bb.putShort((short)connection).putShort((short)connections);
        return mac(bb.array());
    }

    private byte[] mac(final byte[] message)
    {
        try
        {
            // A Mac per call: handshakes are rare and may run on several I/O threads at once.
            final Mac mac = Mac.getInstance(MAC_ALGORITHM);
            mac.init(key);
            return mac.doFinal(message);
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IllegalStateException(MAC_ALGORITHM + " is not available", ex);
        }
    }
}
