package dev.hccl.training;

import dev.hccl.algorithms.AlgorithmCatalog;
import dev.hccl.algorithms.CostModel;
import dev.hccl.algorithms.LinkCosts;
import dev.hccl.algorithms.TuningTable;
import dev.hccl.algorithms.TuningTable.ProtocolCosts;
import dev.hccl.algorithms.WireProtocol;
import dev.hccl.api.Operation;
import dev.hccl.api.RankLayout;

/**
 * What the cost model predicts one training step's gradient synchronisation costs, as the training helpers carry it:
 * the collectives with the cheapest algorithm the cost model may choose, plus what the helpers compute around them
 * (narrowing and widening for {@link WireProtocol#HALF}, the selection and the scatter-add for
 * {@link WireProtocol#SPARSE}, the matrix products of {@link WireProtocol#LOW_RANK}), each from the tuning table's
 * per-protocol {@link ProtocolCosts}. The collective's own price is the table's; the step's shape is this module's, so
 * its price is here. Immutable; computes nothing but the prediction.
 */
public final class StepPrices
{
    /** Built on first use: the standard catalog reads the tuning table, which must be ready first. */
    private static final class Standard
    {
        static final StepPrices PRICES = new StepPrices(AlgorithmCatalog.standard(), TuningTable.standard());
    }

    private final AlgorithmCatalog catalog;
    private final TuningTable table;

    /**
     * @param catalog the algorithms the cost model may choose among.
     * @param table   their tuning figures and the protocols' computation costs.
     */
    public StepPrices(final AlgorithmCatalog catalog, final TuningTable table)
    {
        this.catalog = catalog;
        this.table = table;
    }

    /**
     * @return the prices of the standard algorithms under the standard table.
     */
    public static StepPrices standard()
    {
        return Standard.PRICES;
    }

    /**
     * The predicted time of synchronising one bucket (or one tensor) of FP32 gradients under a compression: the
     * compression's protocol priced by {@link #stepSeconds}, PowerSGD by {@link #lowRankStepSeconds}.
     *
     * @param layout      the ranks' nodes.
     * @param links       the link figures.
     * @param bucketBytes the FP32 gradients of one bucket on one rank, a multiple of 4.
     * @param compression how the bucket travels.
     * @return seconds; 0 for an empty bucket.
     */
    public double seconds(
        final RankLayout layout, final LinkCosts links, final long bucketBytes, final Compression compression)
    {
        if (bucketBytes == 0)
        {
            return 0;
        }
        final WireProtocol protocol = protocolOf(compression);
        return protocol == WireProtocol.LOW_RANK ? lowRankStepSeconds(layout, links, bucketBytes, compression.rank()) :
            stepSeconds(layout, links, bucketBytes, protocol, compression.fraction());
    }

    /**
     * @param compression a compression of the training helpers.
     * @return the wire protocol it travels as.
     */
    public static WireProtocol protocolOf(final Compression compression)
    {
        return switch (compression.kind())
        {
            case NONE -> WireProtocol.PLAIN;
            case FP16, BF16 -> WireProtocol.HALF;
            case FP8_E4M3, FP8_E5M2 -> WireProtocol.QUARTER;
            case TOP_K -> WireProtocol.SPARSE;
            case POWER_SGD -> WireProtocol.LOW_RANK;
        };
    }

    /**
     * The predicted time of synchronising one rank's FP32 gradients as the training helpers do under a protocol,
     * with the cheapest standard algorithm the cost model may choose: {@link WireProtocol#PLAIN}, an all-reduce;
     * {@link WireProtocol#HALF}, narrowing, an all-reduce of 16-bit floats, widening; {@link WireProtocol#SPARSE},
     * the selection of {@code fraction} of the elements (at least one), an all-gather of every rank's pairs, and
     * adding them into the dense result; {@link WireProtocol#QUARTER}, FP8 with a per-bucket scale: an all-reduce (MAX)
     * of one float, scaling and narrowing, an all-reduce of FP8, widening. The FP8 conversions are priced as HALF's
     * (the table has no figure of its own for them: a QUARTER row's buffer is FP8 already). Computes nothing but the
     * prediction.
     *
     * @param layout        the ranks' nodes.
     * @param links         the link figures.
     * @param gradientBytes the FP32 gradients of one rank, a multiple of 4.
     * @param protocol      the protocol.
     * @param fraction      of the elements {@link WireProtocol#SPARSE} sends, in (0, 1]; the other protocols send
     *                      every element and ignore it (pass 1).
     * @return seconds.
     * @throws IllegalArgumentException for {@link WireProtocol#LOW_RANK} ({@link #lowRankStepSeconds}), or a size
     *                                  or fraction out of range.
     */
    public double stepSeconds(
        final RankLayout layout, final LinkCosts links, final long gradientBytes, final WireProtocol protocol,
        final double fraction)
    {
        if (protocol == WireProtocol.LOW_RANK)
        {
            throw new IllegalArgumentException("a LOW_RANK step needs the rank: lowRankStepSeconds");
        }
        if (gradientBytes < 0 || gradientBytes % Float.BYTES != 0 || !(fraction > 0 && fraction <= 1))
        {
            throw new IllegalArgumentException("gradientBytes must be a multiple of 4 and fraction in (0, 1], got " +
                gradientBytes + " and " + fraction);
        }
        final ProtocolCosts cost = table.costs(protocol);
        final double gamma = links.local().gamma();
        if (protocol == WireProtocol.SPARSE)
        {
            final long elements = gradientBytes / Float.BYTES;
            final long sent = elements == 0 ? 0 : Math.max(1, (long)Math.ceil(fraction * elements));
            final long gathered = protocol.wireBytes(sent * Float.BYTES) * layout.worldSize();
            return gamma * (cost.encode() * gradientBytes + cost.decode() * gathered) +
                cheapest(Operation.ALL_GATHER, layout, gathered, links, protocol);
        }
        final long wire = protocol.wireBytes(gradientBytes);
        if (protocol == WireProtocol.QUARTER)
        {
            final ProtocolCosts conversion = table.costs(WireProtocol.HALF);
            return gamma * (conversion.encode() + conversion.decode()) * gradientBytes +
                cheapest(Operation.ALL_REDUCE, layout, Float.BYTES, links, WireProtocol.PLAIN) +
                cheapest(Operation.ALL_REDUCE, layout, wire, links, protocol);
        }
        return gamma * (cost.encode() * gradientBytes + cost.decode() * wire) +
            cheapest(Operation.ALL_REDUCE, layout, wire, links, protocol);
    }

    /**
     * The predicted time of synchronising one bucket of FP32 gradients as the training helpers' PowerSGD does: the
     * bucket seen as a matrix of {@code m = ceil(sqrt(count))} columns and {@code n = ceil(count / m)} rows; M Q,
     * an all-reduce of P ({@code n * rank} FP32 values), M^T P, an all-reduce of Q ({@code m * rank}), and P Q^T with
     * the error feedback, each all-reduce with the cheapest standard algorithm. A bucket whose factors would not be
     * smaller ({@code (n + m) * rank >= count}) goes as it is: {@link WireProtocol#PLAIN}'s step. Per bucket, since the
     * shape is a bucket's: a model's step is the sum over its buckets.
     *
     * @param layout      the ranks' nodes.
     * @param links       the link figures.
     * @param bucketBytes the FP32 gradients of one bucket on one rank, a multiple of 4.
     * @param rank        the approximation's rank, at least 1.
     * @return seconds.
     * @throws IllegalArgumentException for a size or rank out of range.
     */
    public double lowRankStepSeconds(
        final RankLayout layout, final LinkCosts links, final long bucketBytes, final int rank)
    {
        if (bucketBytes < 0 || bucketBytes % Float.BYTES != 0 || rank < 1)
        {
            throw new IllegalArgumentException("bucketBytes must be a multiple of 4 and rank at least 1, got " +
                bucketBytes + " and " + rank);
        }
        final long count = bucketBytes / Float.BYTES;
        final long m = (long)Math.ceil(Math.sqrt(count));
        final long n = m == 0 ? 0 : (count + m - 1) / m;
        if ((n + m) * rank >= count)
        {
            return stepSeconds(layout, links, bucketBytes, WireProtocol.PLAIN, 1);
        }
        final WireProtocol protocol = WireProtocol.LOW_RANK;
        final ProtocolCosts cost = table.costs(protocol);
        final long p = protocol.wireBytes(n * rank * Float.BYTES);
        final long q = protocol.wireBytes(m * rank * Float.BYTES);
        return links.local().gamma() * (cost.encode() * rank + cost.decode()) * bucketBytes +
            cheapest(Operation.ALL_REDUCE, layout, p, links, protocol) +
            cheapest(Operation.ALL_REDUCE, layout, q, links, protocol);
    }

    /** The cheapest standard algorithm the cost model may choose, weighed by the table. */
    private double cheapest(
        final Operation operation, final RankLayout layout, final long wireBytes, final LinkCosts links,
        final WireProtocol protocol)
    {
        return CostModel.of(catalog, table, operation, layout)
            .cheapestSeconds(wireBytes, wireBytes, links, protocol);
    }
}
