package dev.hccl.core.bootstrap;

/**
 * The rendezvous store's protocol. A connection opens with a challenge: the client sends {@link #MAGIC},
 * {@link #VERSION} and a nonce; the store answers {@link #MODE_CLEAR} (or {@link #MODE_TLS_REQUIRED} when it requires
 * TLS and the client came in the clear) and its own nonce; the client sends its proof of the job key over both
 * ({@link #CLIENT_ROLE}); the store answers {@link #OK} and its own proof ({@link #SERVER_ROLE}), which the client
 * checks, or {@link #REFUSED} and closes, or {@link #FULL} and closes when it serves as many clients that proved the
 * key as it may (the client tries again). A store closes a connection still in the challenge, before it answers, to
 * make room for newer ones when too many are; the client tries again then too. The client proves first, so that a stranger gets no proof to test guessed
 * tokens against. A store under TLS tells a client that speaks this protocol in the clear {@link #TLS_REQUIRED} instead
 * of {@link #OK} once it has proven the key; that client may then send one {@link #ABORT} (its own TLS handshake
 * failed: it says why) or close (it has no TLS settings), and the rendezvous is given up either way. A store without
 * TLS answers a TLS ClientHello with a fatal TLS alert.
 * Then each request is a code byte, a UTF key and its arguments ({@link #ABORT}: an error code, the rank it concerns
 * and a UTF reason); every
 * length is checked against a bound before anything is allocated, so garbage input closes the connection instead of
 * exhausting memory.
 */
final class StoreProtocol
{
    static final int MAGIC = 0x48435354; // "HCST"
    static final byte VERSION = 4;
    static final String SERVER_ROLE = "hccl-store-server";
    static final String CLIENT_ROLE = "hccl-store-client";
    static final byte SET = 1;
    static final byte GET = 2;
    static final byte ADD = 3;
    static final byte CHECK = 4;
    /** Gives the rendezvous up: every waiting and later get of a missing key answers ABORTED with the reason. */
    static final byte ABORT = 5;
    /** The job's status, as rank 0's communicator reports it once made ({@code hccl-status}); the key is empty. */
    static final byte STATUS = 6;
    static final byte OK = 0;
    static final byte TIMEOUT = 1;
    static final byte ABORTED = 2;
    static final byte REFUSED = 3;
    static final byte FULL = 4;
    /** The client proved the key in the clear to a store that requires TLS. */
    static final byte TLS_REQUIRED = 5;
    /** The store's first byte, before its nonce: it speaks the clear. */
    static final byte MODE_CLEAR = 0;
    /** The store's first byte, before its nonce: it requires TLS, and a client in the clear cannot join. */
    static final byte MODE_TLS_REQUIRED = 1;
    /** First byte of a TLS handshake record, which opens every ClientHello. */
    static final int TLS_HANDSHAKE_RECORD = 0x16;
    /** The longest TLS record a store without TLS reads before it answers a ClientHello: 2^14 plus expansion. */
    static final int TLS_RECORD_MAX_BYTES = (1 << 14) + 2048;
    /** A TLS record: fatal alert protocol_version (70), the answer to a ClientHello at a store without TLS. */
    static final byte[] TLS_PROTOCOL_VERSION_ALERT = { 0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46 };
    static final int MAX_VALUE_BYTES = 1 << 20;
    /**
     * Keys a rank sets once it has heard the verdict of a rendezvous given up ({@code heard/RANK}), so that rank 0's
     * store knows when it may stop answering late ranks with it.
     */
    static final String HEARD_PREFIX = "heard/";
    static final int MAX_KEYS = 1 << 16;

    private StoreProtocol()
    {
    }
}
