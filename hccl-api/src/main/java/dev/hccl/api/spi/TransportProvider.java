package dev.hccl.api.spi;

/**
 * A transport plug-in, found with {@link java.util.ServiceLoader}: it opens this rank's end of its transport, which
 * then says which peers it can reach. The communicator picks, for every peer, the most preferred transport that can
 * connect the pair, as NCCL's {@code canConnect} does; a pair that one transport fails to connect falls to the next.
 */
public interface TransportProvider
{
    /**
     * The transport's name, as logs and {@code hccl-bench}'s header show it: {@code shm}, {@code tcp}, ...
     *
     * @return the name.
     */
    String name();

    /**
     * The order in which transports are tried for a pair: the highest first.
     *
     * @return the preference; the shared-memory transport has {@code 200}, TCP {@code 100}.
     */
    int preference();

    /**
     * Opens this rank's end: binds or creates what the peers will reach, described by
     * {@link Transport#localAddress()}. Nothing is connected yet.
     *
     * @param context the rank, its configuration and where inbound messages go.
     * @return the transport, or null when it is turned off or cannot work on this machine; the provider logs why.
     * @throws dev.hccl.api.HcclException when the transport is wanted but fails in a way that must fail the rank.
     */
    Transport open(TransportContext context);
}
