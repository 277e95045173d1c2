package dev.hccl.api.spi;

import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;

import java.util.Objects;

/**
 * The fingerprint of an operation: what it is, its type, its reduction, its root and its count. Every data frame
 * carries its sender's, so that ranks that issue different operations at the same sequence number fail at once,
 * naming both, instead of hanging or mixing data.
 */
public final class OpDescriptor
{
    /** Value of {@link #root()} for operations without a root or peer. */
    public static final int NO_ROOT = -1;

    private final Operation operation;
    private final DataType dataType;
    private final ReduceOp reduceOp;
    private final int root;
    private final long count;

    /**
     * Describes an operation.
     *
     * @param operation what it is.
     * @param dataType  its element type, or null when it carries none (barrier).
     * @param reduceOp  its reduction, or null when it reduces nothing.
     * @param root      its root (broadcast, reduce), or {@link #NO_ROOT}.
     * @param count     its count argument.
     */
    public OpDescriptor(
        final Operation operation, final DataType dataType, final ReduceOp reduceOp, final int root, final long count)
    {
        this.operation = Objects.requireNonNull(operation, "operation");
        this.dataType = dataType;
        this.reduceOp = reduceOp;
        this.root = root;
        this.count = count;
    }

    /**
     * What the operation is.
     *
     * @return the operation.
     */
    public Operation operation()
    {
        return operation;
    }

    /**
     * Element type.
     *
     * @return the type, or null.
     */
    public DataType dataType()
    {
        return dataType;
    }

    /**
     * Reduction.
     *
     * @return the reduction, or null.
     */
    public ReduceOp reduceOp()
    {
        return reduceOp;
    }

    /**
     * Root rank.
     *
     * @return the root, or {@link #NO_ROOT}.
     */
    public int root()
    {
        return root;
    }

    /**
     * Count argument.
     *
     * @return the count.
     */
    public long count()
    {
        return count;
    }

    @Override
    public boolean equals(final Object o)
    {
        if (this == o)
        {
            return true;
        }
        if (!(o instanceof OpDescriptor))
        {
            return false;
        }
        final OpDescriptor that = (OpDescriptor)o;
        return operation == that.operation && dataType == that.dataType && reduceOp == that.reduceOp &&
            root == that.root && count == that.count;
    }

    @Override
    public int hashCode()
    {
        return Objects.hash(operation, dataType, reduceOp, root, count);
    }

    /**
     * Whether {@link #count()} says anything: false for {@link Operation#ALL_TO_ALL_V}, whose counts differ from pair
     * to pair, so that no count is the same on every rank and its fingerprint's count is 0.
     *
     * @return true when the count is part of the fingerprint.
     */
    public boolean hasCount()
    {
        return dataType != null && operation != Operation.ALL_TO_ALL_V;
    }

    /**
     * The operation as a user wrote it, e.g. {@code allReduce(count=1000, FP32, SUM)}; without a count where
     * {@link #hasCount()} is false, e.g. {@code allToAllV(FP32)}.
     *
     * @return the description.
     */
    @Override
    public String toString()
    {
        final StringBuilder sb = new StringBuilder(48).append(operation.displayName()).append('(');
        if (hasCount())
        {
            sb.append("count=").append(count).append(", ");
        }
        if (dataType != null)
        {
            sb.append(dataType);
        }
        if (reduceOp != null)
        {
            sb.append(", ").append(reduceOp);
        }
        if (root != NO_ROOT)
        {
            sb.append(operation == Operation.SEND || operation == Operation.RECV ? ", peer=" : ", root=").append(root);
        }
        return sb.append(')').toString();
    }
}
