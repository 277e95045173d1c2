package dev.hccl.api.spi;

import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;

/**
 * An operation fingerprint ({@link OpDescriptor}) as transports carry it in a message header: the operation, data type
 * and reduction as their one-byte wire codes ({@link #NONE} for a type or reduction the operation has not), the root
 * and the count. Decoding checks every code, since the bytes come from a peer, and hands back the previous descriptor
 * when the next message repeats it (every segment of an operation does), so a receiver allocates one per operation. An
 * instance is its receiver's alone.
 */
public final class DescriptorCodec
{
    /** The code written for a data type or reduction the operation does not have. */
    public static final int NONE = 0xFF;

    private OpDescriptor last;

    /**
     * The byte written for an operation.
     *
     * @param operation the operation.
     * @return its {@link Operation#code()}.
     */
    public static int code(final Operation operation)
    {
        return operation.code();
    }

    /**
     * The byte written for a data type.
     *
     * @param dataType the type, or null.
     * @return its {@link DataType#code()}, or {@link #NONE}.
     */
    public static int code(final DataType dataType)
    {
        return null == dataType ? NONE : dataType.code();
    }

    /**
     * The byte written for a reduction.
     *
     * @param reduceOp the reduction, or null.
     * @return its {@link ReduceOp#code()}, or {@link #NONE}.
     */
    public static int code(final ReduceOp reduceOp)
    {
        return null == reduceOp ? NONE : reduceOp.code();
    }

    /**
     * The fingerprint a header carries.
     *
     * @param operation the operation's code, 0 to 255.
     * @param dataType  the data type's code or {@link #NONE}.
     * @param reduceOp  the reduction's code or {@link #NONE}.
     * @param root      the root.
     * @param count     the count.
     * @return the descriptor, or null when a code names nothing ({@link #describeBad} says which).
     */
    public OpDescriptor decode(
        final int operation, final int dataType, final int reduceOp, final int root, final long count)
    {
        if (null != describeBad(operation, dataType, reduceOp))
        {
            return null;
        }
        final Operation op = Operation.fromCode(operation);
        final DataType dt = NONE == dataType ? null : DataType.fromCode(dataType);
        final ReduceOp ro = NONE == reduceOp ? null : ReduceOp.fromCode(reduceOp);
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
     * What is wrong with a header's codes, for a protocol error.
     *
     * @param operation the operation's code.
     * @param dataType  the data type's code.
     * @param reduceOp  the reduction's code.
     * @return the first bad code in words, or null when all are good.
     */
    public static String describeBad(final int operation, final int dataType, final int reduceOp)
    {
        if (null == Operation.fromCode(operation))
        {
            return "bad operation code " + operation;
        }
        if (NONE != dataType && null == DataType.fromCode(dataType))
        {
            return "bad data type code " + dataType;
        }
        if (NONE != reduceOp && null == ReduceOp.fromCode(reduceOp))
        {
            return "bad reduce op code " + reduceOp;
        }
        return null;
    }
}
