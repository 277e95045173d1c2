package dev.hccl.djl;

import ai.djl.ndarray.NDArray;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Gives every rank rank 0's parameters, as DDP does when it wraps a model: the parameters are packed in block order
 * into chunks of at most {@link #CHUNK_BYTES}, each broadcast once, and written into every other rank's arrays in
 * place. All parameters go, with a gradient or not (a batch norm's running statistics too).
 */
final class ParameterBroadcast
{
    /** The most bytes a broadcast carries: few collectives, and a bounded staging buffer. */
    static final int CHUNK_BYTES = 64 << 20;

    private ParameterBroadcast()
    {
    }

    static void fromRankZero(final Communicator comm, final ModelParameters parameters)
    {
        final boolean root = comm.rank() == 0;
        long total = 0;
        for (int i = 0; i < parameters.size(); i++)
        {
            final NDArray array = parameters.array(i);
            total += array.size() * array.getDataType().getNumOfBytes();
        }
        final ByteBuffer staging = ByteBuffer.allocateDirect((int)Math.min(CHUNK_BYTES, Math.max(total, 1)))
            .order(ByteOrder.nativeOrder());
        final List<Integer> pending = new ArrayList<>();
        for (int i = 0; i < parameters.size(); i++)
        {
            final NDArray array = parameters.array(i);
            final ByteBuffer memory = array.toByteBuffer(true);
            if (memory.remaining() > staging.capacity())
            {
                flush(comm, parameters, staging, pending);
                // Too large for a chunk: straight into its memory, checked as a chunk's parameters are.
                comm.broadcast(memory, memory.remaining(), DataType.UINT8, 0);
                if (!root)
                {
                    ModelParameters.written(array, memory, "parameter " + parameters.name(i));
                }
                continue;
            }
            if (memory.remaining() > staging.remaining())
            {
                flush(comm, parameters, staging, pending);
            }
            if (root)
            {
                staging.put(memory);
            }
            else
            {
                staging.position(staging.position() + memory.remaining());
            }
            pending.add(i);
        }
        flush(comm, parameters, staging, pending);
    }

    private static void flush(
        final Communicator comm, final ModelParameters parameters, final ByteBuffer staging, final List<Integer> pending)
    {
        if (pending.isEmpty())
        {
            return;
        }
        final int bytes = staging.position();
        staging.flip();
        comm.broadcast(staging, bytes, DataType.UINT8, 0);
        if (comm.rank() != 0)
        {
            int at = 0;
            for (final int i : pending)
            {
                final NDArray array = parameters.array(i);
                final ByteBuffer memory = array.toByteBuffer(true);
                final int size = memory.remaining();
                memory.put(staging.duplicate().position(at).limit(at + size));
                at += size;
                ModelParameters.written(array, memory, "parameter " + parameters.name(i));
            }
        }
        pending.clear();
        staging.clear();
    }
}
