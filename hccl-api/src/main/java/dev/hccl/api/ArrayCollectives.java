package dev.hccl.api;

import java.nio.ByteBuffer;

/**
 * {@link HeapArrayCollectives}' all-gather and reduce-scatter of arrays: checks that the two arrays' lengths fit the
 * world
 * size, then runs the {@link ByteBuffer} form on staging buffers ({@link ArrayStaging}). A length that does not fit
 * is an {@link IllegalArgumentException} raised before anything is sent, naming the call, the rank, both lengths and
 * the length that would fit.
 */
final class ArrayCollectives
{
    private ArrayCollectives()
    {
    }

    /**
     * All-gather of {@code send} from every rank into {@code recv}, in rank order.
     *
     * @param comm    the communicator.
     * @param element the arrays' element class, {@code float.class} for {@code float[]}, for messages.
     * @param send    this rank's contribution: one of the four array types.
     * @param recv    the result, the same type, {@code send.length * worldSize} elements.
     * @throws IllegalArgumentException when either is null or the lengths do not fit.
     */
    static void allGather(final HeapArrayCollectives comm, final Class<?> element, final Object send, final Object recv)
    {
        final String call = "allGather(" + element + "[] send, " + element + "[] recv)";
        final int sendLength = checkedLength(comm, call, "send", send);
        final int recvLength = checkedLength(comm, call, "recv", recv);
        checkOneBlockPerRank(comm, call, "recv", recvLength, "send", sendLength);
        final ByteBuffer staged = ArrayStaging.in(send);
        final ByteBuffer result = ArrayStaging.empty(recv);
        comm.allGather(staged, result, sendLength, ArrayStaging.type(send));
        ArrayStaging.out(result, recv);
    }

    /**
     * Reduce-scatter of {@code send} across ranks; this rank receives its block of the result in {@code recv}.
     *
     * @param comm    the communicator.
     * @param element the arrays' element class, for messages.
     * @param send    the input: one of the four array types, {@code recv.length * worldSize} elements.
     * @param recv    this rank's block of the result, the same type.
     * @param op      the reduction.
     * @throws IllegalArgumentException when either array is null or the lengths do not fit.
     */
    static void reduceScatter(
        final HeapArrayCollectives comm, final Class<?> element, final Object send, final Object recv,
        final ReduceOp op)
    {
        final String call = "reduceScatter(" + element + "[] send, " + element + "[] recv, " + op + ")";
        final int sendLength = checkedLength(comm, call, "send", send);
        final int recvLength = checkedLength(comm, call, "recv", recv);
        checkOneBlockPerRank(comm, call, "send", sendLength, "recv", recvLength);
        final ByteBuffer staged = ArrayStaging.in(send);
        final ByteBuffer result = ArrayStaging.empty(recv);
        comm.reduceScatter(staged, result, recvLength, ArrayStaging.type(send), op);
        ArrayStaging.out(result, recv);
    }

    /** Checks that the array named {@code whole} holds one block the length of {@code block}'s per rank. */
    private static void checkOneBlockPerRank(final HeapArrayCollectives comm, final String call, final String whole,
        final int wholeLength, final String block, final int blockLength)
    {
        final int n = comm.worldSize();
        final long needed = (long)blockLength * n;
        if (needed != wholeLength)
        {
            throw new IllegalArgumentException(where(comm, call) + whole + ".length is " + wholeLength + " and " +
                block + ".length " + blockLength + ", but " + whole + " must hold " + block + ".length x " + n +
                " ranks = " + needed + " elements: pass a " + whole + " of " + needed + " elements" +
                (wholeLength % n == 0 ? " or a " + block + " of " + wholeLength / n : ""));
        }
    }

    private static int checkedLength(
        final HeapArrayCollectives comm, final String call, final String name, final Object array)
    {
        if (null == array)
        {
            throw new IllegalArgumentException(where(comm, call) + name + " must not be null");
        }
        return ArrayStaging.length(array);
    }

    private static String where(final HeapArrayCollectives comm, final String call)
    {
        return call + " on rank " + comm.rank() + ": ";
    }
}
