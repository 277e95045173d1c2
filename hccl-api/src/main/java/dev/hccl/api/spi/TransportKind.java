package dev.hccl.api.spi;

import java.util.Objects;

/**
 * What a transport is, as values the library decides from: where its bytes travel and what its links cost. A
 * transport's {@link TransportProvider#name() name} is for display only, so a new transport is priced and treated
 * right by declaring its kind, with no change to the core.
 * <p>
 * Providers make one with {@link #inProcess()}, {@link #sharedMemory} or {@link #network}, so that the kind can grow
 * (a capability such as collectives on a node's shared memory) without breaking the transports that declare one.
 *
 * @param medium       where the bytes between two ranks travel.
 * @param withinNode   what a link between two ranks of one node costs; null when the transport does not say, which
 *                     leaves the cost model's defaults.
 * @param betweenNodes what a link between two nodes costs; null for a transport that stays within a node, or a
 *                     network transport that does not say ({@link #undeclared()}).
 */
public record TransportKind(Medium medium, LinkFigures withinNode, LinkFigures betweenNodes)
{
    /**
     * Where the bytes between two ranks travel.
     */
    public enum Medium
    {
        /** The peers are threads of this JVM: a send hands its message over before it returns. */
        IN_PROCESS("in-process"),
        /** Processes of one node, through memory both map. */
        SHARED_MEMORY("shared memory"),
        /** Any two ranks, within a node or between nodes, through the network stack. */
        NETWORK("network");

        private final String description;

        Medium(final String description)
        {
            this.description = description;
        }

        /**
         * For logs and the cost model's source: {@code shared memory}, ...
         *
         * @return the medium in words.
         */
        @Override
        public String toString()
        {
            return description;
        }
    }

    /**
     * What one link costs, in the alpha-beta terms of the cost model: a message of {@code m} bytes takes
     * {@code secondsPerMessage + m * secondsPerByte}.
     *
     * @param secondsPerMessage the latency of one message (alpha).
     * @param secondsPerByte    the time per byte on the link (beta, 1 / bandwidth).
     */
    public record LinkFigures(double secondsPerMessage, double secondsPerByte)
    {
        /**
         * Validates.
         *
         * @param secondsPerMessage finite, not negative.
         * @param secondsPerByte    finite, not negative.
         */
        public LinkFigures
        {
            if (!(secondsPerMessage >= 0 && secondsPerByte >= 0) ||
                !Double.isFinite(secondsPerMessage + secondsPerByte))
            {
                throw new IllegalArgumentException("link figures must be finite and not negative, got " +
                    secondsPerMessage + " s per message, " + secondsPerByte + " s per byte");
            }
        }
    }

    /**
     * Validates: a transport between nodes is a network one, and only a network one has figures between nodes.
     *
     * @param medium       not null.
     * @param withinNode   may be null.
     * @param betweenNodes null unless {@link Medium#NETWORK}.
     */
    public TransportKind
    {
        Objects.requireNonNull(medium, "medium");
        if (medium != Medium.NETWORK && betweenNodes != null)
        {
            throw new IllegalArgumentException("a " + medium + " transport has no figures between nodes");
        }
    }

    /**
     * What a provider that does not say what it is counts as ({@link TransportProvider#kind()}'s default): a network
     * transport priced as the cost model's defaults, as every transport but shared memory was before transports said
     * what they are.
     *
     * @return the kind.
     */
    public static TransportKind undeclared()
    {
        return new TransportKind(Medium.NETWORK, null, null);
    }

    /**
     * Ranks as threads of one JVM, priced as the cost model's defaults.
     *
     * @return the kind.
     */
    public static TransportKind inProcess()
    {
        return new TransportKind(Medium.IN_PROCESS, null, null);
    }

    /**
     * Processes of one node through shared memory.
     *
     * @param link what a link costs.
     * @return the kind.
     */
    public static TransportKind sharedMemory(final LinkFigures link)
    {
        return new TransportKind(Medium.SHARED_MEMORY, Objects.requireNonNull(link, "link"), null);
    }

    /**
     * A network transport, which connects any two ranks.
     *
     * @param withinNode   what a link between two ranks of one node costs (over the loopback).
     * @param betweenNodes what a link between two nodes costs.
     * @return the kind.
     */
    public static TransportKind network(final LinkFigures withinNode, final LinkFigures betweenNodes)
    {
        return new TransportKind(Medium.NETWORK, Objects.requireNonNull(withinNode, "withinNode"),
            Objects.requireNonNull(betweenNodes, "betweenNodes"));
    }

    /**
     * Whether the peers are threads of this JVM, so that a message is delivered before its send returns.
     *
     * @return true for {@link Medium#IN_PROCESS}.
     */
    public boolean inProcessPeers()
    {
        return medium == Medium.IN_PROCESS;
    }

    /**
     * Whether the transport reaches ranks of other nodes.
     *
     * @return true for {@link Medium#NETWORK}.
     */
    public boolean crossesNodes()
    {
        return medium == Medium.NETWORK;
    }
}
