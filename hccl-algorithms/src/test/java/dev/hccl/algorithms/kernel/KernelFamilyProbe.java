package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The main class of the JVMs that {@link KernelSelectionTest} starts: loads {@link Reducers}, prints the family it
 * chose, and checks that one reduction works, which on a JVM without {@code jdk.incubator.vector} proves that nothing
 * linked the vector kernels.
 */
public final class KernelFamilyProbe
{
    private KernelFamilyProbe()
    {
    }

    /**
     * Entry point.
     *
     * @param args ignored.
     */
    public static void main(final String[] args)
    {
        final int count = 1001;
        final ByteBuffer dst = ByteBuffer.allocateDirect(count * Float.BYTES).order(ByteOrder.nativeOrder());
        final ByteBuffer src = ByteBuffer.allocateDirect(count * Float.BYTES).order(ByteOrder.nativeOrder());
        for (int i = 0; i < count; i++)
        {
            dst.putFloat(i * Float.BYTES, i);
            src.putFloat(i * Float.BYTES, 0.5f);
        }
        Reducers.of(DataType.FP32, ReduceOp.SUM).reduce(dst, 0, src, 0, count);
        for (int i = 0; i < count; i++)
        {
            if (dst.getFloat(i * Float.BYTES) != i + 0.5f)
            {
                throw new AssertionError("element " + i + ": " + dst.getFloat(i * Float.BYTES));
            }
        }
        System.out.println("family=" + Reducers.family() + " kernel=" + Reducers.of(DataType.FP32, ReduceOp.SUM));
    }
}
