package dev.hccl.bench;

import dev.hccl.api.Communicator;

/**
 * Creates this rank's communicator for one sweep: from the environment in a launched process, from
 * {@code Hccl.initAll} for ranks as threads.
 */
@FunctionalInterface
public interface CommunicatorFactory
{
    /**
     * Creates a communicator; every rank calls it with the same value at the same point.
     *
     * @param algo the {@code --algo} value to configure it with ({@code CommConfigBuilder#algo}), or null for the
     *             default configuration.
     * @return the communicator, which the caller closes.
     */
    Communicator open(String algo);
}
