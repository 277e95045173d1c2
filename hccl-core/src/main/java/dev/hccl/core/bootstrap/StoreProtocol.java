package dev.hccl.core.bootstrap;

/**
 * The rendezvous store's protocol. A connection opens with a challenge: the client sends {@link #MAGIC},
 * {@link #VERSION} and a nonce; the store answers its own nonce; the client sends its proof of the job key over both
 * ({@link #CLIENT_ROLE}); the store answers {@link #OK} and its own proof ({@link #SERVER_ROLE}), which the client
 * checks, or {@link #REFUSED} and closes. The client proves first, so that a stranger gets no proof to test guessed
 * tokens against. Then each request is a code byte, a UTF key and its arguments; every
 * length is checked against a bound before anything is allocated, so garbage input closes the connection instead of
 * exhausting memory.
 */
final class StoreProtocol
{
    static final int MAGIC = 0x48435354; // "HCST"
    static final byte VERSION = 2;
    static final String SERVER_ROLE = "hccl-store-server";
    static final String CLIENT_ROLE = "hccl-store-client";
    static final byte SET = 1;
    static final byte GET = 2;
    static final byte ADD = 3;
    static final byte CHECK = 4;
    static final byte OK = 0;
    static final byte TIMEOUT = 1;
    static final byte ABORTED = 2;
    static final byte REFUSED = 3;
    static final byte FULL = 4;
    static final int MAX_VALUE_BYTES = 1 << 20;
    static final int MAX_KEYS = 1 << 16;

    private StoreProtocol()
    {
    }
}
