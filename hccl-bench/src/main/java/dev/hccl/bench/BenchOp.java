package dev.hccl.bench;

import java.util.Arrays;
import java.util.Iterator;
import java.util.Locale;

/**
 * The operations {@code hccl-bench} measures, named as nccl-tests' binaries are, with nccl-tests' conventions for how
 * a size maps onto buffers and for the bus-bandwidth factor.
 */
public enum BenchOp
{
    /** {@code allReduce}: size is each rank's buffer. */
    ALL_REDUCE("all_reduce", true, false),
    /** {@code allGather}: size is the gathered (receive) buffer; count is per rank. */
    ALL_GATHER("all_gather", false, false),
    /** {@code reduceScatter}: size is the send buffer; count is what each rank receives. */
    REDUCE_SCATTER("reduce_scatter", true, false),
    /** {@code broadcast} from the root. */
    BROADCAST("broadcast", false, true),
    /** {@code reduce} to the root. */
    REDUCE("reduce", true, true),
    /** {@code allToAll}: size is each rank's whole buffer; count is per block. */
    ALLTOALL("alltoall", false, false),
    /** A ring of {@code send} to rank + 1 and {@code recv} from rank - 1, as nccl-tests' {@code sendrecv}. */
    SENDRECV("sendrecv", false, false),
    /** {@code barrier}: no data, so time only. */
    BARRIER("barrier", false, false);

    private final String cliName;
    private final boolean reduction;
    private final boolean rooted;

    BenchOp(final String cliName, final boolean reduction, final boolean rooted)
    {
        this.cliName = cliName;
        this.reduction = reduction;
        this.rooted = rooted;
    }

    /**
     * The name on the command line and in reports.
     *
     * @return e.g. {@code all_reduce}.
     */
    public String cliName()
    {
        return cliName;
    }

    /**
     * The library's operation, whose algorithm {@link dev.hccl.api.Communicator#algorithmFor} explains.
     *
     * @return the operation, or null for sendrecv, which has no algorithm to choose.
     */
    public dev.hccl.api.Operation operation()
    {
        return switch (this)
        {
            case ALL_REDUCE -> dev.hccl.api.Operation.ALL_REDUCE;
            case ALL_GATHER -> dev.hccl.api.Operation.ALL_GATHER;
            case REDUCE_SCATTER -> dev.hccl.api.Operation.REDUCE_SCATTER;
            case BROADCAST -> dev.hccl.api.Operation.BROADCAST;
            case REDUCE -> dev.hccl.api.Operation.REDUCE;
            case ALLTOALL -> dev.hccl.api.Operation.ALL_TO_ALL;
            case BARRIER -> dev.hccl.api.Operation.BARRIER;
            case SENDRECV -> null;
        };
    }

    /**
     * Whether the operation takes a reduction ({@code -o} applies).
     *
     * @return true for all_reduce, reduce_scatter and reduce.
     */
    public boolean hasReduction()
    {
        return reduction;
    }

    /**
     * Whether the operation has a root ({@code -r} applies).
     *
     * @return true for broadcast and reduce.
     */
    public boolean hasRoot()
    {
        return rooted;
    }

    /**
     * nccl-tests' factor from algorithm bandwidth to bus bandwidth: the share of the data each rank's link must carry
     * under an optimal algorithm, so that busbw can be compared with the hardware's peak whatever the rank count.
     *
     * @param ranks the world size.
     * @return 2(n-1)/n for all_reduce; (n-1)/n for all_gather, reduce_scatter and alltoall; 1 for broadcast, reduce
     * and sendrecv; 0 for barrier, which moves no data.
     */
    public double busBwFactor(final int ranks)
    {
        return switch (this)
        {
            case ALL_REDUCE -> 2.0 * (ranks - 1) / ranks;
            case ALL_GATHER, REDUCE_SCATTER, ALLTOALL -> (double)(ranks - 1) / ranks;
            case BROADCAST, REDUCE, SENDRECV -> 1.0;
            case BARRIER -> 0.0;
        };
    }

    /**
     * Maps a size from the sweep onto buffers, as nccl-tests' {@code getCollByteCount} does (without the 16-byte
     * rounding of per-rank blocks that recent nccl-tests apply for GPU vector loads, which buys nothing here).
     *
     * @param size        bytes asked for.
     * @param elementSize bytes per element.
     * @param ranks       the world size.
     * @return the layout; its {@link SizeLayout#bytes} may be below {@code size} where the size does not divide.
     */
    public SizeLayout layout(final long size, final int elementSize, final int ranks)
    {
        final long count = size / elementSize;
        final long base = count / ranks;
        return switch (this)
        {
            case ALL_GATHER -> new SizeLayout(base, base * ranks, base, base, 0);
            case REDUCE_SCATTER -> new SizeLayout(base * ranks, base, base, 0, base);
            case ALLTOALL -> new SizeLayout(base * ranks, base * ranks, base, 0, 0);
            case BARRIER -> new SizeLayout(0, 0, 0, 0, 0);
            case ALL_REDUCE, BROADCAST, REDUCE, SENDRECV -> new SizeLayout(count, count, count, 0, 0);
        };
    }

    /**
     * The operation with a command-line name.
     *
     * @param name e.g. {@code all_reduce}, in any case.
     * @return the operation.
     * @throws IllegalArgumentException naming the valid names when there is none.
     */
    public static BenchOp fromName(final String name)
    {
        final String wanted = name.toLowerCase(Locale.ROOT);
        for (final BenchOp op : values())
        {
            if (op.cliName.equals(wanted))
            {
                return op;
            }
        }
        throw new IllegalArgumentException("unknown operation '" + name + "'; expected one of " + names());
    }

    /**
     * The command-line names, for usage text and picocli's completion candidates.
     */
    public static final class Names implements Iterable<String>
    {
        /**
         * For picocli, which instantiates it.
         */
        public Names()
        {
        }

        @Override
        public Iterator<String> iterator()
        {
            return Arrays.stream(values()).map(BenchOp::cliName).iterator();
        }
    }

    private static String names()
    {
        return String.join(", ", new Names());
    }
}
