package dev.hccl.api.spi;

/**
 * The rendezvous store, open to transports while they connect: a transport's ends agree on a pair through it (which
 * segment to map, whether it worked), as NCCL's transports do over its bootstrap network. Keys are this transport's
 * own (the communicator prefixes them); each key is written once.
 */
public interface Bootstrap
{
    /**
     * Publishes a value.
     *
     * @param key   the key.
     * @param value the bytes.
     */
    void put(String key, byte[] value);

    /**
     * Waits for a value to be published.
     *
     * @param key           the key.
     * @param deadlineNanos when to give up, as {@link System#nanoTime()}.
     * @return the value, or null when the deadline passed first.
     */
    byte[] get(String key, long deadlineNanos);
}
