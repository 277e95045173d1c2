package dev.hccl.bench.jmh;

import dev.hccl.api.DataType;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * What the benchmarks share: the JVM flags of their forks, operand data, and a bounded wait.
 */
final class BenchmarkSupport
{
    /** Agrona 2.x, under the kernels, needs this flag; the forks get it whatever the launching JVM had. */
    static final String ADD_OPENS = "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED";

    /**
     * The Vector API, which the fast reduction kernels use when the JVM has it, as {@code bin/hccl-java} gives it: the
     * suite measures what real runs use. (The JVM then prints "WARNING: Using incubator modules".)
     */
    static final String VECTOR_MODULE = "--add-modules=jdk.incubator.vector";

    /** Rank 0 logs a line at INFO on creation, for every communicator a benchmark makes; keep the output readable. */
    static final String QUIET_LOGGING = "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn";

    /** A wait inside one invocation that lasts this long is a hang, not a slow run: fail rather than spin on. */
    static final long WAIT_LIMIT_NS = TimeUnit.SECONDS.toNanos(30);

    /**
     * Spins before yielding: a pause instruction lasts up to ~100 cycles on recent x86, so this is some microseconds,
     * the order of a wake-up on the awaited side.
     */
    private static final int SPINS = 100;

    private static final int FP16_ONE = 0x3C00;
    private static final int BF16_ONE = 0x3F80;
    private static final int FP8_E4M3_ONE = 0x38;
    private static final int FP8_E5M2_ONE = 0x3C;

    private BenchmarkSupport()
    {
    }

    /**
     * A direct, native-order buffer of {@code count} random elements. Integers take any value; floating-point
     * elements are in [1, 2), so sums and products never become subnormal.
     *
     * @param type   the element type.
     * @param count  elements.
     * @param random the source of values.
     * @return the buffer, position 0, limit and capacity {@code count * type.size()}.
     */
    static ByteBuffer filled(final DataType type, final int count, final SplittableRandom random)
    {
        final ByteBuffer buf = ByteBuffer.allocateDirect(count * type.size()).order(ByteOrder.nativeOrder());
        for (int i = 0; i < count; i++)
        {
            switch (type)
            {
                case INT8, UINT8 -> buf.put(i, (byte)random.nextInt());
                case INT16 -> buf.putShort(i << 1, (short)random.nextInt());
                case INT32 -> buf.putInt(i << 2, random.nextInt());
                case INT64 -> buf.putLong(i << 3, random.nextLong());
                // Exponent of 1.0 and a random mantissa: a value in [1, 2).
                case FP16 -> buf.putShort(i << 1, (short)(FP16_ONE | random.nextInt(1 << 10)));
                case BF16 -> buf.putShort(i << 1, (short)(BF16_ONE | random.nextInt(1 << 7)));
                case FP32 -> buf.putFloat(i << 2, 1.0f + (float)random.nextDouble());
                case FP64 -> buf.putDouble(i << 3, 1.0 + random.nextDouble());
                case FP8_E4M3 -> buf.put(i, (byte)(FP8_E4M3_ONE | random.nextInt(1 << 3)));
                case FP8_E5M2 -> buf.put(i, (byte)(FP8_E5M2_ONE | random.nextInt(1 << 2)));
                default -> throw new IllegalArgumentException("no fill for " + type);
            }
        }
        return buf;
    }

    /**
     * Backs off in a wait loop: spins first, since the awaited event is usually microseconds away, then yields, since
     * on a machine with few cores the spinning thread may be holding up the very thread it waits for.
     *
     * @param spins how many times the caller has called this in the current wait.
     * @param start {@link System#nanoTime()} when the wait began.
     * @param what  what is awaited, for the error.
     * @throws IllegalStateException when the wait has lasted {@link #WAIT_LIMIT_NS}.
     */
    static void backOff(final long spins, final long start, final String what)
    {
        if (spins < SPINS)
        {
            Thread.onSpinWait();
        }
        else
        {
            Thread.yield();
            if ((spins & 1023) == 0 && System.nanoTime() - start > WAIT_LIMIT_NS)
            {
                throw new IllegalStateException("gave up after " + TimeUnit.NANOSECONDS.toSeconds(WAIT_LIMIT_NS) +
                    " s waiting for " + what);
            }
        }
    }
}
