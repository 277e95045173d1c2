package dev.hccl.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.nn.Parameter;
import ai.djl.util.Pair;
import dev.hccl.api.Communicator;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A model's parameters in the block's order, which is the same on every rank that built the same model, and the
 * checks that make it so: their names, shapes and types are compared across the ranks before any of their bytes
 * moves. Parameter and gradient memory is reached through {@code NDArray.toByteBuffer(true)}, which DJL's PyTorch
 * engine answers for a CPU array with its memory itself; {@link #written} checks that a write through it reached the
 * array, so that an engine that answers with a copy is an error, not a lost update.
 */
final class ModelParameters
{
    private final List<String> names = new ArrayList<>();
    private final List<Parameter> parameters = new ArrayList<>();

    ModelParameters(final Iterable<Pair<String, Parameter>> block)
    {
        for (final Pair<String, Parameter> pair : block)
        {
            names.add(pair.getKey());
            parameters.add(pair.getValue());
        }
    }

    int size()
    {
        return parameters.size();
    }

    String name(final int i)
    {
        return names.get(i);
    }

    Parameter parameter(final int i)
    {
        return parameters.get(i);
    }

    NDArray array(final int i)
    {
        final Parameter p = parameters.get(i);
        if (!p.isInitialized())
        {
            throw new IllegalStateException("parameter " + names.get(i) + " is not initialized: call " +
                "trainer.initialize(inputShapes) on every rank before training");
        }
        return p.getArray();
    }

    /** Each parameter as "name shape type, gradient or not", to compare across the ranks. */
    String[] signature()
    {
        final String[] lines = new String[parameters.size()];
        for (int i = 0; i < lines.length; i++)
        {
            final NDArray a = array(i);
            lines[i] = names.get(i) + " " + a.getShape() + " " + a.getDataType() +
                (parameters.get(i).requiresGradient() ? "" : " (no gradient)");
        }
        return lines;
    }

    /**
     * Fails every rank alike when the ranks' models differ: the signatures are gathered, and each rank compares every
     * rank's with rank 0's.
     *
     * @param comm the ranks.
     * @param call the call, for the message.
     */
    void checkSameOnEveryRank(final Communicator comm, final String call)
    {
        final List<String[]> all = comm.allGatherObject(signature(), String[].class);
        final String[] first = all.get(0);
        for (int r = 1; r < all.size(); r++)
        {
            final String[] other = all.get(r);
            final int n = Math.min(first.length, other.length);
            for (int i = 0; i <= n; i++)
            {
                final String mine = i < first.length ? first[i] : "nothing";
                final String theirs = i < other.length ? other[i] : "nothing";
                if (!mine.equals(theirs))
                {
                    throw new HcclException(ErrorCode.E_MISMATCH, call + " on rank " + comm.rank() + ": the ranks " +
                        "built different models: parameter " + i + " is " + theirs + " on rank " + r + " but " + mine +
                        " on rank 0 (" + other.length + " parameters against " + first.length + "); every rank " +
                        "must build the same block with the same input shapes");
                }
            }
        }
    }

    /**
     * Checks that what was written through {@code memory} is in the array: a view of it fetched afresh (for a
     * gradient, a new handle from its parameter) must read it back.
     *
     * @param array   the array written, fetched afresh.
     * @param memory  what {@code toByteBuffer(true)} answered, written from 0 to its limit.
     * @param what    the array, for the message.
     */
    static void written(final NDArray array, final ByteBuffer memory, final String what)
    {
        final ByteBuffer again = array.toByteBuffer(true);
        if (again.mismatch(memory.duplicate().rewind()) != -1)
        {
            throw new IllegalStateException("hccl-djl: a write to " + what + " did not reach it: either it has none " +
                "or the engine (" +
                array.getManager().getEngine().getEngineName() + ") answered toByteBuffer(true) with a copy, not " +
                "the array's memory (train on the CPU with DJL's PyTorch engine, whose CPU arrays give their memory)");
        }
    }
}
