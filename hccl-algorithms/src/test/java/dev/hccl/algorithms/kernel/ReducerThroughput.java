package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.Reducer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;

/**
 * A rough single-threaded throughput probe for the kernels, not a test and not a benchmark of record (JMH in
 * {@code hccl-bench} is): prints destination bytes reduced per second over 64 MiB direct buffers.
 * <p>
 * Run, after {@code mvn -pl hccl-algorithms test-compile}, with
 * {@code java --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -cp <test-classes:classes:deps>
 * dev.hccl.algorithms.kernel.ReducerThroughput FP32:SUM BF16:SUM}.
 */
public final class ReducerThroughput
{
    private ReducerThroughput()
    {
    }

    /**
     * Entry point.
     *
     * @param args {@code TYPE:OP} pairs; FP32:SUM when none.
     */
    public static void main(final String[] args)
    {
        final int bytes = 64 << 20;
        final ByteBuffer dst = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
        final ByteBuffer src = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
        for (final String spec : args.length > 0 ? args : new String[] { "FP32:SUM" })
        {
            final String[] parts = spec.split(":");
            final DataType type = DataType.valueOf(parts[0]);
            final ReduceOp op = ReduceOp.valueOf(parts[1]);
            final int count = bytes / type.size();
            // Ordinary values (no NaN, subnormal or overflow storms) so that the figure is the common case.
            final Random random = new Random(1);
            final byte[] content = new byte[bytes];
            fillOrdinary(type, random, content, count);
            dst.put(0, content);
            fillOrdinary(type, random, content, count);
            src.put(0, content);

            final Reducer reducer = Reducers.of(type, op);
            long best = Long.MAX_VALUE;
            for (int i = 0; i < 30; i++)
            {
                final long start = System.nanoTime();
                reducer.reduce(dst, 0, src, 0, count);
                best = Math.min(best, System.nanoTime() - start);
            }
            System.out.printf("%-10s %6.2f GB/s (best of 30, %d MiB)%n", spec, bytes / (double)best, bytes >> 20);
        }
    }

    private static void fillOrdinary(final DataType type, final Random random, final byte[] bytes, final int count)
    {
        final ByteBuffer out = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < count; i++)
        {
            final float value = (float)random.nextGaussian();
            final int at = i * type.size();
            switch (type)
            {
                case INT8, UINT8 -> out.put(at, (byte)random.nextInt());
                case INT16 -> out.putShort(at, (short)random.nextInt());
                case INT32 -> out.putInt(at, random.nextInt());
                case INT64 -> out.putLong(at, random.nextLong());
                case FP16 -> out.putShort(at, HalfFloats.floatToFp16(value));
                case BF16 -> out.putShort(at, HalfFloats.floatToBf16(value));
                case FP32 -> out.putFloat(at, value);
                case FP64 -> out.putDouble(at, value);
                default -> throw new IllegalStateException();
            }
        }
    }
}
