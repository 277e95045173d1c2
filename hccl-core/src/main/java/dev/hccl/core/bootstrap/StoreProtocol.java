package dev.hccl.core.bootstrap;

/**
 * The rendezvous store's request codes and bounds. A request is a code byte, a UTF key and its arguments; every
 * length is checked against a bound before anything is allocated, so garbage input closes the connection instead of
 * exhausting memory.
 */
final class StoreProtocol
{
    static final int MAGIC = 0x48435354; // "HCST"
    static final byte SET = 1;
    static final byte GET = 2;
    static final byte ADD = 3;
    static final byte CHECK = 4;
    static final byte OK = 0;
    static final byte TIMEOUT = 1;
    static final byte ABORTED = 2;
    static final int MAX_VALUE_BYTES = 1 << 20;
    static final int MAX_KEYS = 1 << 16;

    private StoreProtocol()
    {
    }
}
