package dev.hccl.api;

import java.nio.ByteBuffer;

/**
 * The collectives of Java arrays, which every {@link Communicator} has: in-place all-reduce and broadcast,
 * all-gather and reduce-scatter, of {@code float[]}, {@code double[]}, {@code int[]} and {@code long[]}. Each runs the
 * {@link ByteBuffer} form on direct staging buffers ({@code ArrayStaging}): filled from the array, reduced or
 * broadcast in place, or gathered or scattered into a second buffer, and copied back. Convenient for small data and
 * tests; large or repeated transfers are faster on direct buffers, which need no copy.
 */
public interface HeapArrayCollectives
{
    /**
     * This rank's index in the communicator.
     *
     * @return 0 to {@link #worldSize()} - 1.
     */
    int rank();

    /**
     * Number of ranks in the communicator.
     *
     * @return the world size, at least 1.
     */
    int worldSize();

    /**
     * All-reduce of direct or heap buffers ({@link Communicator#allReduce(ByteBuffer, ByteBuffer, long, DataType,
     * ReduceOp)}).
     *
     * @param send  input.
     * @param recv  result.
     * @param count elements.
     * @param type  element type.
     * @param op    reduction.
     */
    void allReduce(ByteBuffer send, ByteBuffer recv, long count, DataType type, ReduceOp op);

    /**
     * All-gather of buffers ({@link Communicator#allGather(ByteBuffer, ByteBuffer, long, DataType)}).
     *
     * @param send      this rank's contribution.
     * @param recv      every rank's, in rank order.
     * @param sendCount elements each rank contributes.
     * @param type      element type.
     */
    void allGather(ByteBuffer send, ByteBuffer recv, long sendCount, DataType type);

    /**
     * Reduce-scatter of buffers ({@link Communicator#reduceScatter(ByteBuffer, ByteBuffer, long, DataType,
     * ReduceOp)}).
     *
     * @param send      input: {@code recvCount * worldSize()} elements.
     * @param recv      this rank's block of the result.
     * @param recvCount elements per rank.
     * @param type      element type.
     * @param op        reduction.
     */
    void reduceScatter(ByteBuffer send, ByteBuffer recv, long recvCount, DataType type, ReduceOp op);

    /**
     * Broadcast of a buffer ({@link Communicator#broadcast(ByteBuffer, long, DataType, int)}).
     *
     * @param buf   the root's input, every other rank's output.
     * @param count elements.
     * @param type  element type.
     * @param root  the rank that sends.
     */
    void broadcast(ByteBuffer buf, long count, DataType type, int root);

    /**
     * In-place all-reduce of a {@code float[]}.
     *
     * @param data input and result.
     * @param op   reduction.
     */
    default void allReduce(final float[] data, final ReduceOp op)
    {
        final ByteBuffer b = ArrayStaging.in(data);
        allReduce(b, b, data.length, DataType.FP32, op);
        ArrayStaging.out(b, data);
    }

    /**
     * In-place all-reduce of a {@code double[]}.
     *
     * @param data input and result.
     * @param op   reduction.
     */
    default void allReduce(final double[] data, final ReduceOp op)
    {
        final ByteBuffer b = ArrayStaging.in(data);
        allReduce(b, b, data.length, DataType.FP64, op);
        ArrayStaging.out(b, data);
    }

    /**
     * In-place all-reduce of an {@code int[]}.
     *
     * @param data input and result.
     * @param op   reduction.
     */
    default void allReduce(final int[] data, final ReduceOp op)
    {
        final ByteBuffer b = ArrayStaging.in(data);
        allReduce(b, b, data.length, DataType.INT32, op);
        ArrayStaging.out(b, data);
    }

    /**
     * In-place all-reduce of a {@code long[]}.
     *
     * @param data input and result.
     * @param op   reduction.
     */
    default void allReduce(final long[] data, final ReduceOp op)
    {
        final ByteBuffer b = ArrayStaging.in(data);
        allReduce(b, b, data.length, DataType.INT64, op);
        ArrayStaging.out(b, data);
    }

    /**
     * In-place broadcast of a {@code float[]} from {@code root}.
     *
     * @param data the data at the root; the destination elsewhere.
     * @param root the rank that sends.
     */
    default void broadcast(final float[] data, final int root)
    {
        final ByteBuffer b = ArrayStaging.in(data);
        broadcast(b, data.length, DataType.FP32, root);
        ArrayStaging.out(b, data);
    }

    /**
     * In-place broadcast of a {@code double[]} from {@code root}.
     *
     * @param data the data at the root; the destination elsewhere.
     * @param root the rank that sends.
     */
    default void broadcast(final double[] data, final int root)
    {
        final ByteBuffer b = ArrayStaging.in(data);
        broadcast(b, data.length, DataType.FP64, root);
        ArrayStaging.out(b, data);
    }

    /**
     * In-place broadcast of an {@code int[]} from {@code root}.
     *
     * @param data the data at the root; the destination elsewhere.
     * @param root the rank that sends.
     */
    default void broadcast(final int[] data, final int root)
    {
        final ByteBuffer b = ArrayStaging.in(data);
        broadcast(b, data.length, DataType.INT32, root);
        ArrayStaging.out(b, data);
    }

    /**
     * In-place broadcast of a {@code long[]} from {@code root}.
     *
     * @param data the data at the root; the destination elsewhere.
     * @param root the rank that sends.
     */
    default void broadcast(final long[] data, final int root)
    {
        final ByteBuffer b = ArrayStaging.in(data);
        broadcast(b, data.length, DataType.INT64, root);
        ArrayStaging.out(b, data);
    }

    /**
     * All-gather of a {@code float[]}: every rank's {@code send}, in rank order, into {@code recv} on every rank.
     *
     * @param send this rank's contribution.
     * @param recv the result: {@code send.length * worldSize()} elements, overwritten.
     * @throws IllegalArgumentException when either is null or {@code recv.length != send.length * worldSize()},
     *                                  naming the rank and both lengths, before anything is sent.
     */
    default void allGather(final float[] send, final float[] recv)
    {
        ArrayCollectives.allGather(this, float.class, send, recv);
    }

    /**
     * All-gather of a {@code double[]}: every rank's {@code send}, in rank order, into {@code recv} on every rank.
     *
     * @param send this rank's contribution.
     * @param recv the result: {@code send.length * worldSize()} elements, overwritten.
     * @throws IllegalArgumentException when either is null or {@code recv.length != send.length * worldSize()},
     *                                  naming the rank and both lengths, before anything is sent.
     */
    default void allGather(final double[] send, final double[] recv)
    {
        ArrayCollectives.allGather(this, double.class, send, recv);
    }

    /**
     * All-gather of an {@code int[]}: every rank's {@code send}, in rank order, into {@code recv} on every rank.
     *
     * @param send this rank's contribution.
     * @param recv the result: {@code send.length * worldSize()} elements, overwritten.
     * @throws IllegalArgumentException when either is null or {@code recv.length != send.length * worldSize()},
     *                                  naming the rank and both lengths, before anything is sent.
     */
    default void allGather(final int[] send, final int[] recv)
    {
        ArrayCollectives.allGather(this, int.class, send, recv);
    }

    /**
     * All-gather of a {@code long[]}: every rank's {@code send}, in rank order, into {@code recv} on every rank.
     *
     * @param send this rank's contribution.
     * @param recv the result: {@code send.length * worldSize()} elements, overwritten.
     * @throws IllegalArgumentException when either is null or {@code recv.length != send.length * worldSize()},
     *                                  naming the rank and both lengths, before anything is sent.
     */
    default void allGather(final long[] send, final long[] recv)
    {
        ArrayCollectives.allGather(this, long.class, send, recv);
    }

    /**
     * Reduce-scatter of a {@code float[]}: {@code send} is reduced across ranks and rank {@code r} receives
     * block {@code r} of the result in {@code recv}.
     *
     * @param send the input: {@code recv.length * worldSize()} elements.
     * @param recv this rank's block of the result, overwritten.
     * @param op   reduction.
     * @throws IllegalArgumentException when either is null or {@code send.length != recv.length * worldSize()},
     *                                  naming the rank and both lengths, before anything is sent.
     */
    default void reduceScatter(final float[] send, final float[] recv, final ReduceOp op)
    {
        ArrayCollectives.reduceScatter(this, float.class, send, recv, op);
    }

    /**
     * Reduce-scatter of a {@code double[]}: {@code send} is reduced across ranks and rank {@code r} receives
     * block {@code r} of the result in {@code recv}.
     *
     * @param send the input: {@code recv.length * worldSize()} elements.
     * @param recv this rank's block of the result, overwritten.
     * @param op   reduction.
     * @throws IllegalArgumentException when either is null or {@code send.length != recv.length * worldSize()},
     *                                  naming the rank and both lengths, before anything is sent.
     */
    default void reduceScatter(final double[] send, final double[] recv, final ReduceOp op)
    {
        ArrayCollectives.reduceScatter(this, double.class, send, recv, op);
    }

    /**
     * Reduce-scatter of an {@code int[]}: {@code send} is reduced across ranks and rank {@code r} receives
     * block {@code r} of the result in {@code recv}.
     *
     * @param send the input: {@code recv.length * worldSize()} elements.
     * @param recv this rank's block of the result, overwritten.
     * @param op   reduction.
     * @throws IllegalArgumentException when either is null or {@code send.length != recv.length * worldSize()},
     *                                  naming the rank and both lengths, before anything is sent.
     */
    default void reduceScatter(final int[] send, final int[] recv, final ReduceOp op)
    {
        ArrayCollectives.reduceScatter(this, int.class, send, recv, op);
    }

    /**
     * Reduce-scatter of a {@code long[]}: {@code send} is reduced across ranks and rank {@code r} receives
     * block {@code r} of the result in {@code recv}.
     *
     * @param send the input: {@code recv.length * worldSize()} elements.
     * @param recv this rank's block of the result, overwritten.
     * @param op   reduction.
     * @throws IllegalArgumentException when either is null or {@code send.length != recv.length * worldSize()},
     *                                  naming the rank and both lengths, before anything is sent.
     */
    default void reduceScatter(final long[] send, final long[] recv, final ReduceOp op)
    {
        ArrayCollectives.reduceScatter(this, long.class, send, recv, op);
    }
}
