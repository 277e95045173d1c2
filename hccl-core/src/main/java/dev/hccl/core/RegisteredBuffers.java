package dev.hccl.core;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.RegisteredMemory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * {@link Communicator#allocateRegistered}: registers a buffer in the node arena's shared memory on every rank, or
 * gives every rank an ordinary one. The ranks agree through two all-reduces of the communicator itself, so that a rank
 * that cannot make or map the memory turns every rank to ordinary buffers instead of leaving a registration that some
 * peers cannot read:
 * <ol>
 *     <li>each rank makes its memory ({@link RegisteredMemory#create}); the all-reduce takes the smallest and the
 *     largest size asked for (they must be equal) and whether every rank made its memory;</li>
 *     <li>each maps the others' ({@link RegisteredMemory#mapPeers}); the all-reduce says whether all did;</li>
 *     <li>each concludes the registration, complete or abandoned ({@link RegisteredMemory#conclude}).</li>
 * </ol>
 * Every rank takes part, with or without an arena, so that all issue the same operations. One allocation at a time.
 */
final class RegisteredBuffers
{
    private final Communicator comm;
    private final RegisteredMemory memory;

    /**
     * @param comm   the communicator, whose all-reduces carry the agreement.
     * @param memory its node arena's registered memory, or null when it has none.
     */
    RegisteredBuffers(final Communicator comm, final RegisteredMemory memory)
    {
        this.comm = comm;
        this.memory = memory;
    }

    /**
     * Allocates, as {@link Communicator#allocateRegistered} says.
     *
     * @param bytes the size.
     * @return the buffer.
     */
    synchronized ByteBuffer allocate(final int bytes)
    {
        if (bytes <= 0)
        {
            throw new IllegalArgumentException("allocateRegistered(" + bytes + ") on rank " + comm.rank() +
                ": the size must be more than 0");
        }
        boolean concluded = null == memory;
        try
        {
            final ByteBuffer own = null == memory ? null : memory.create(bytes);
            // The smallest size, the largest (negated), and whether every rank made its memory.
            final long[] made = agree(bytes, -bytes, null == memory || null != own ? 1 : 0);
            if (made[0] != -made[1])
            {
                throw new HcclException(ErrorCode.E_PARA, comm.rank(), HcclException.UNKNOWN_RANK, null,
                    HcclException.NO_SEQUENCE, "allocateRegistered(" + bytes + "): the ranks asked for sizes from " +
                    made[0] + " to " + -made[1] + " bytes; every rank must ask for the same size, in the same order",
                    null);
            }
            final boolean mapped = 1 == made[2] && (null == memory || memory.mapPeers(bytes));
            final boolean everyRank = 1 == agree(mapped ? 1 : 0)[0];
            concluded = true;
            if (null != memory && memory.conclude(everyRank))
            {
                return own;
            }
            return ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
        }
        finally
        {
            if (!concluded)
            {
                memory.conclude(false);
            }
        }
    }

    /** The smallest of each value over every rank. */
    private long[] agree(final long... values)
    {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(values.length * Long.BYTES).order(ByteOrder.nativeOrder());
        for (int i = 0; i < values.length; i++)
        {
            buffer.putLong(i * Long.BYTES, values[i]);
        }
        comm.allReduce(buffer, buffer, values.length, DataType.INT64, ReduceOp.MIN);
        final long[] smallest = new long[values.length];
        for (int i = 0; i < values.length; i++)
        {
            smallest[i] = buffer.getLong(i * Long.BYTES);
        }
        return smallest;
    }
}
