package dev.hccl.api;

import java.nio.ByteBuffer;

/**
 * {@link Communicator}'s all-gather and reduce-scatter of arrays: checks that the two arrays' lengths fit the world
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
    static void allGather(final Communicator comm, final Class<?> element, final Object send, final Object recv)
    {
        final String call = "allGather(" + element + "[] send, " + element + "[] recv)";
        final int sendLength = checkedLength(comm, call, "send", send);
        final int recvLength = checkedLength(comm, call, "recv", recv);
        final int n = comm.worldSize();
        final long needed = (long)sendLength * n;
        if (needed != recvLength)
        {
            throw new IllegalArgumentException(where(comm, call) + "recv.length is " + recvLength +
                " and send.length " + sendLength + ", but recv must hold send.length x " + n + " ranks = " + needed +
                " elements: pass a recv of " + needed + " elements" +
                (recvLength % n == 0 ? " or a send of " + recvLength / n : ""));
        }
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
        final Communicator comm, final Class<?> element, final Object send, final Object recv, final ReduceOp op)
    {
        final String call = "reduceScatter(" + element + "[] send, " + element + "[] recv, " + op + ")";
        final int sendLength = checkedLength(comm, call, "send", send);
        final int recvLength = checkedLength(comm, call, "recv", recv);
        final int n = comm.worldSize();
        final long needed = (long)recvLength * n;
        if (needed != sendLength)
        {
            throw new IllegalArgumentException(where(comm, call) + "send.length is " + sendLength +
                " and recv.length " + recvLength + ", but send must hold recv.length x " + n + " ranks = " + needed +
                " elements: pass a send of " + needed + " elements" +
                (sendLength % n == 0 ? " or a recv of " + sendLength / n : ""));
        }
        final ByteBuffer staged = ArrayStaging.in(send);
        final ByteBuffer result = ArrayStaging.empty(recv);
        comm.reduceScatter(staged, result, recvLength, ArrayStaging.type(send), op);
        ArrayStaging.out(result, recv);
    }

    private static int checkedLength(final Communicator comm, final String call, final String name, final Object array)
    {
        if (null == array)
        {
            throw new IllegalArgumentException(where(comm, call) + name + " must not be null");
        }
        return ArrayStaging.length(array);
    }

    private static String where(final Communicator comm, final String call)
    {
        return call + " on rank " + comm.rank() + ": ";
    }
}
