package dev.hccl.api.spi;

import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;

/**
 * An operation fingerprint ({@link OpDescriptor}) as transports carry it in a message header: the operation, data type
 * and reduction as one-byte ordinals ({@link #NONE} for a type or reduction the operation has not), the root and the
 * count. Decoding checks every ordinal, since the bytes come from a peer, and hands back the previous descriptor when
 * the next message repeats it (every segment of an operation does), so a receiver allocates one per operation. An
 * instance is its receiver's alone.
 */
public final class DescriptorCodec
{
    /** The ordinal written for a data type or reduction the operation does not have. */
    public static final int NONE = 0xFF;

    private static final int OPERATION_COUNT = Operation.values().length;
    private static final int DATA_TYPE_COUNT = DataType.values().length;
    private static final int REDUCE_OP_COUNT = ReduceOp.values().length;

    private OpDescriptor last;

    /**
     * The byte written for a data type.
     *
     * @param dataType the type, or null.
     * @return its ordinal, or {@link #NONE}.
     */
    public static int code(final DataType dataType)
    {
        return null == dataType ? NONE : dataType.ordinal();
    }

    /**
     * The byte written for a reduction.
     *
     * @param reduceOp the reduction, or null.
     * @return its ordinal, or {@link #NONE}.
     */
    public static int code(final ReduceOp reduceOp)
    {
        return null == reduceOp ? NONE : reduceOp.ordinal();
    }

    /**
     * The fingerprint a header carries.
     *
     * @param operation the operation's ordinal, 0 to 255.
     * @param dataType  the data type's ordinal or {@link #NONE}.
     * @param reduceOp  the reduction's ordinal or {@link #NONE}.
     * @param root      the root.
     * @param count     the count.
     * @return the descriptor, or null when an ordinal names nothing ({@link #describeBad} says which).
     */
    public OpDescriptor decode(
        final int operation, final int dataType, final int reduceOp, final int root, final long count)
    {
        if (null != describeBad(operation, dataType, reduceOp))
        {
            return null;
        }
        final Operation op = Operation.fromOrdinal(operation);
        final DataType dt = NONE == dataType ? null : DataType.fromOrdinal(dataType);
        final ReduceOp ro = NONE == reduceOp ? null : ReduceOp.fromOrdinal(reduceOp);
        final OpDescriptor previous = last;
        if (null != previous && previous.operation() == op && previous.dataType() == dt &&
            previous.reduceOp() == ro && previous.root() == root && previous.count() == count)
        {
            return previous;
        }
        final OpDescriptor desc = new OpDescriptor(op, dt, ro, root, count);
        last = desc;
        return desc;
    }

    /**
     * What is wrong with a header's ordinals, for a protocol error.
     *
     * @param operation the operation's ordinal.
     * @param dataType  the data type's ordinal.
     * @param reduceOp  the reduction's ordinal.
     * @return the first bad ordinal in words, or null when all are good.
     */
    public static String describeBad(final int operation, final int dataType, final int reduceOp)
    {
        if (operation < 0 || operation >= OPERATION_COUNT)
        {
            return "bad operation ordinal " + operation;
        }
        if (NONE != dataType && (dataType < 0 || dataType >= DATA_TYPE_COUNT))
        {
            return "bad data type ordinal " + dataType;
        }
        if (NONE != reduceOp && (reduceOp < 0 || reduceOp >= REDUCE_OP_COUNT))
        {
            return "bad reduce op ordinal " + reduceOp;
        }
        return null;
    }
}
