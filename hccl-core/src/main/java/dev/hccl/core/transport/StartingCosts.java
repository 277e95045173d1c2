package dev.hccl.core.transport;

import dev.hccl.algorithms.CostParameters;
import dev.hccl.algorithms.LinkCosts;
import dev.hccl.api.spi.TransportKind;

import java.util.List;

/**
 * The cost model's starting figures, from what the transports say they are ({@link TransportKind}), never from their
 * names: within a node, the figures of the most preferred transport that gives some; between nodes, those of the most
 * preferred network transport. What no transport gives stays as in {@link LinkCosts#DEFAULTS}, and so does the cost
 * of reducing, which is the CPU's whatever the link.
 */
public final class StartingCosts
{
    private StartingCosts()
    {
    }

    /**
     * The starting figures for transports that every rank opened, so that every rank comes to the same figures (a
     * pair that fell back to another transport does not change them: only what every rank knows may).
     *
     * @param kinds the kinds of the transports every rank opened, most preferred first.
     * @return the figures; {@link LinkCosts#DEFAULTS} itself when no transport gives any.
     */
    public static LinkCosts of(final List<TransportKind> kinds)
    {
        TransportKind local = null;
        TransportKind network = null;
        for (final TransportKind kind : kinds)
        {
            if (local == null && kind.withinNode() != null)
            {
                local = kind;
            }
            if (network == null && kind.crossesNodes() && kind.betweenNodes() != null)
            {
                network = kind;
            }
        }
        if (local == null && network == null)
        {
            return LinkCosts.DEFAULTS;
        }
        final CostParameters withinNode = local == null ? LinkCosts.DEFAULTS.local() :
            parameters(local.withinNode(), LinkCosts.DEFAULTS.local());
        final CostParameters betweenNodes = network == null ? LinkCosts.DEFAULTS.network() :
            parameters(network.betweenNodes(), LinkCosts.DEFAULTS.network());
        return new LinkCosts(withinNode, betweenNodes, local == null || local.crossesNodes() ? "defaults" :
            "defaults (" + local.medium() + " within nodes)");
    }

    /** A link's figures, with the reduction of the defaults they replace. */
    private static CostParameters parameters(final TransportKind.LinkFigures link, final CostParameters replaced)
    {
        return new CostParameters(link.secondsPerMessage(), link.secondsPerByte(), replaced.gamma());
    }
}
