package dev.hccl.api.spi;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Setting;

import java.util.List;

/**
 * A transport plug-in, found with {@link java.util.ServiceLoader}: it opens this rank's end of its transport, which
 * then says which peers it can reach. The communicator picks, for every peer, the most preferred transport that can
 * connect the pair, as NCCL's {@code canConnect} does; a pair that one transport fails to connect falls to the next.
 * What the transport is (its medium, what its links cost) the provider says as values, in {@link #kind()}; its
 * {@link #name()} is for display.
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
     * What this transport is: where its bytes travel and what its links cost. The communicator decides from it (the
     * cost model's starting figures, whether the peers are threads of this process), never from {@link #name()}.
     * A provider that does not say is a network transport priced as the cost model's defaults.
     *
     * @return the kind; {@link TransportKind#undeclared()} unless overridden.
     */
    default TransportKind kind()
    {
        return TransportKind.undeclared();
    }

    /**
     * Opens this rank's end: binds or creates what the peers will reach, described by
     * {@link Transport#localAddress()}. Nothing is connected yet.
     *
     * @param context the rank, its configuration and where inbound messages go.
     * @return the transport, or null when it is turned off or cannot work on this machine; the provider logs why.
     * @throws dev.hccl.api.HcclException when the transport is wanted but fails in a way that must fail the rank.
     */
    Transport open(TransportContext context);

    /**
     * The settings this transport owns, each defined once as a {@link Setting}: read with
     * {@link CommConfig#get(Setting)}, listed in the configuration logged at creation, documented in docs/guide/configuration.md.
     *
     * @return the settings; none by default.
     */
    default List<Setting<?>> settings()
    {
        return List.of();
    }

    /**
     * Checks this transport's settings together, before anything is opened, so that a rank set up wrongly fails at
     * creation naming the variables.
     *
     * @param config the configuration.
     * @throws IllegalArgumentException naming the variables and what to change.
     */
    default void check(final CommConfig config)
    {
        for (final Setting<?> s : settings())
        {
            config.get(s);
        }
    }
}
