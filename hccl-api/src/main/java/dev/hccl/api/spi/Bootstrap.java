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

    /**
     * Adds to a counter atomically, as torch.distributed's {@code Store.add}: a counter's keys are apart from the
     * published values', and it starts at zero. The rank that sees its own delta came first, so that one rank of many
     * acts once (one WARN for the whole job, say).
     *
     * @param key   the counter's key.
     * @param delta what to add.
     * @return the counter after the addition.
     */
    long add(String key, long delta);
}
