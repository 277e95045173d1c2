package dev.hccl.algorithms.kernel;

import dev.hccl.api.HalfFloats;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The vector kernels against the scalar ones, element for element, in a JVM that has {@code jdk.incubator.vector}
 * (skipped elsewhere).
 * <p>
 * {@link ReducersTest} checks whichever family runs against an independent reference, but on small inputs, where the
 * vector loops mostly run in the interpreter, that is in the Vector API's Java fallback. Here each kernel runs on
 * enough data, often enough, for C2 to compile its loop with the SIMD intrinsics, which is the code that must match.
 */
@Timeout(300)
class VectorKernelsTest
{
    /** Not a multiple of any vector length, so that every call also has a scalar tail. */
    private static final int COUNT = 20_011;
    /**
     * Calls per kernel: with the loop's back-edges (over 60,000 even for 64 byte lanes), well past C2's thresholds, so
     * that most later calls run C2's code.
     */
    private static final int ROUNDS = 200;

    private static KernelFactory vectors;

    /** The types that stay scalar, as the test below checks: vectors do not pay for them. */
    private static final Set<DataType> SCALAR_TYPES =
        EnumSet.of(DataType.INT64, DataType.FP64, DataType.FP8_E4M3, DataType.FP8_E5M2);

    /**
     * The types that have vector kernels.
     */
    static Stream<Arguments> vectorTypesAndOps()
    {
        return ReducersTest.typesAndOps().filter(a -> !SCALAR_TYPES.contains((DataType)a.get()[0]));
    }

    @BeforeAll
    static void loadVectorFactory() throws ReflectiveOperationException
    {
        assumeTrue(KernelSelection.vectorModulePresent(), "needs --add-modules jdk.incubator.vector");
        // The FP16 and BF16 kernels too, although the family leaves them out by default: they must be right.
        vectors = KernelSelection.vectorFactory(true);
    }

    @Test
    void everyTypeButTheSixtyFourBitAndEightBitFloatOnesHasAVectorKernel()
    {
        for (final DataType type : new DataType[] {
            DataType.INT8, DataType.UINT8, DataType.INT16, DataType.FP16, DataType.BF16 })
        {
            assertInstanceOf(AbstractVectorReducer.class, vectors.kernel(Reducers.scalarKernel(type, ReduceOp.SUM)));
        }
        for (final DataType type : SCALAR_TYPES)
        {
            final AbstractReducer scalar = Reducers.scalarKernel(type, ReduceOp.SUM);
            assertSame(scalar, vectors.kernel(scalar), type.toString());
        }
    }

    @Test
    void loadsAndStoresThroughTheMemoryAccessThisJdkHas()
    {
        // JDK 19 replaced the Vector API's ByteBuffer methods with MemorySegment ones.
        assertNull(VectorMemory.unavailable());
        assertEquals(Runtime.version().feature() >= 19 ? "MemorySegment" : "ByteBuffer", VectorMemory.kind());
        assertTrue(vectors.description().contains(VectorMemory.kind() + " access"), vectors.description());
    }

    @ParameterizedTest
    @MethodSource("vectorTypesAndOps")
    void compiledVectorKernelMatchesTheScalarKernel(final DataType type, final ReduceOp op)
    {
        final AbstractReducer scalar = Reducers.scalarKernel(type, op);
        final AbstractReducer vector = wholeLoopKernel(scalar);
        assertNotSame(scalar, vector, "a vector kernel for " + type + " " + op);

        final Random random = new Random(7L * type.ordinal() + op.ordinal());
        final int bytes = COUNT * type.size();
        final byte[] dstContent = new byte[bytes];
        final byte[] srcContent = new byte[bytes];
        final ByteBuffer scalarDst = ByteBuffer.allocateDirect(bytes);
        final ByteBuffer vectorDst = ByteBuffer.allocateDirect(bytes);
        final ByteBuffer src = ByteBuffer.allocateDirect(bytes);
        for (int round = 0; round < ROUNDS; round++)
        {
            // Fresh edge-heavy data every few rounds: NaNs, infinities, subnormals, signed zeros, extremes.
            if (round % 25 == 0)
            {
                Samples.fill(type, random, dstContent, 0, COUNT);
                Samples.fill(type, random, srcContent, 0, COUNT);
                src.put(0, srcContent);
            }
            scalarDst.put(0, dstContent);
            vectorDst.put(0, dstContent);

            scalar.reduce(scalarDst, 0, src, 0, COUNT);
            vector.reduce(vectorDst, 0, src, 0, COUNT);

            ReducersTest.assertElements(type, BufferKind.bytes(scalarDst), BufferKind.bytes(vectorDst), 0, COUNT,
                type + " " + op + " round " + round);
        }
    }

    @ParameterizedTest
    @MethodSource("vectorTypesAndOps")
    void compiledThreeOperandLoopIsTheScalarKernelOnACopyOfTheLeftOperand(final DataType type, final ReduceOp op)
    {
        final AbstractReducer scalar = Reducers.scalarKernel(type, op);
        final AbstractReducer vector = wholeLoopKernel(scalar);
        final Random random = new Random(13L * type.ordinal() + op.ordinal());
        final int bytes = COUNT * type.size();
        final byte[] leftContent = new byte[bytes];
        final byte[] rightContent = new byte[bytes];
        // The destination a few elements off the operands' alignment, so that its scalar head differs from theirs.
        final int at = 3 * type.size();
        final ByteBuffer expected = ByteBuffer.allocateDirect(bytes);
        final ByteBuffer actual = ByteBuffer.allocateDirect(at + bytes);
        final ByteBuffer left = ByteBuffer.allocateDirect(bytes);
        final ByteBuffer right = ByteBuffer.allocateDirect(bytes);
        for (int round = 0; round < ROUNDS; round++)
        {
            if (round % 25 == 0)
            {
                Samples.fill(type, random, leftContent, 0, COUNT);
                Samples.fill(type, random, rightContent, 0, COUNT);
                left.put(0, leftContent);
                right.put(0, rightContent);
            }
            expected.put(0, leftContent);
            scalar.reduce(expected, 0, right, 0, COUNT);
            vector.reduce(actual, at, left, 0, right, 0, COUNT);

            final byte[] actualBytes = new byte[bytes];
            actual.get(at, actualBytes);
            ReducersTest.assertElements(type, BufferKind.bytes(expected), actualBytes, 0, COUNT,
                type + " " + op + " round " + round);
        }
    }

    @ParameterizedTest
    @MethodSource("vectorTypesAndOps")
    void largeCallsSplitWhileTheTrialIsOpenMatchTheScalarKernel(final DataType type, final ReduceOp op)
    {
        final AbstractReducer scalar = Reducers.scalarKernel(type, op);
        final AbstractVectorReducer vector = assertInstanceOf(AbstractVectorReducer.class, vectors.kernel(scalar));
        final int size = type.size();
        final int bytes = COUNT * size;
        assertTrue(bytes >= VectorLoopTrial.MIN_BYTES, bytes + " bytes are not split");
        final Random random = new Random(17L * type.ordinal() + op.ordinal());
        final byte[] leftContent = new byte[bytes];
        final byte[] rightContent = new byte[bytes];
        // The destination a few elements off a cache line, so that the split follows a scalar head.
        final int at = 3 * size;
        final ByteBuffer expected = ByteBuffer.allocateDirect(bytes);
        final ByteBuffer twoOperands = ByteBuffer.allocateDirect(at + bytes);
        final ByteBuffer threeOperands = ByteBuffer.allocateDirect(at + bytes);
        final ByteBuffer left = ByteBuffer.allocateDirect(bytes);
        final ByteBuffer right = ByteBuffer.allocateDirect(bytes);
        // Calls of both kinds while the trial is open, timed and feeding the loop; too few timed calls to end it.
        for (int call = 0; call < VectorLoopTrial.TIMED_EVERY * (VectorLoopTrial.WINS - 1); call++)
        {
            Samples.fill(type, random, leftContent, 0, COUNT);
            Samples.fill(type, random, rightContent, 0, COUNT);
            left.put(0, leftContent);
            right.put(0, rightContent);
            expected.put(0, leftContent);
            scalar.reduce(expected, 0, right, 0, COUNT);
            final ByteBuffer result;
            if (call % 2 == 0)
            {
                twoOperands.put(at, leftContent);
                vector.reduce(twoOperands, at, right, 0, COUNT);
                result = twoOperands;
            }
            else
            {
                vector.reduce(threeOperands, at, left, 0, right, 0, COUNT);
                result = threeOperands;
            }
            final byte[] actual = new byte[bytes];
            result.get(at, actual);
            ReducersTest.assertElements(type, BufferKind.bytes(expected), actual, 0, COUNT,
                type + " " + op + " call " + call);
        }
        assertFalse(vector.trial().proven(), "the calls were split");
    }

    @Test
    void theTrialEndsOnceTheVectorLoopRunsCompiled()
    {
        final AbstractVectorReducer vector = assertInstanceOf(AbstractVectorReducer.class,
            vectors.kernel(Reducers.scalarKernel(DataType.FP32, ReduceOp.SUM)));
        final int count = 4 * VectorLoopTrial.MIN_BYTES / Float.BYTES;
        final ByteBuffer dst = ByteBuffer.allocateDirect(count * Float.BYTES).order(ByteOrder.nativeOrder());
        final ByteBuffer src = ByteBuffer.allocateDirect(count * Float.BYTES).order(ByteOrder.nativeOrder());
        // Enough calls for C2 to compile the loop (its first timed calls run it interpreted) and for a run of wins
        // on a busy machine: each call of compiled code takes microseconds.
        int calls = 0;
        while (!vector.trial().proven() && calls < 2_000_000)
        {
            vector.reduce(dst, 0, src, 0, count);
            calls++;
        }
        assertTrue(vector.trial().proven(),
            "the vector loop never came within the ratio of the scalar one in " + calls + " calls");
    }

    @ParameterizedTest
    @MethodSource("vectorTypesAndOps")
    void overlappingRangesGiveTheScalarResult(final DataType type, final ReduceOp op)
    {
        final AbstractReducer scalar = Reducers.scalarKernel(type, op);
        final AbstractReducer vector = vectors.kernel(scalar);
        assertNotSame(scalar, vector, "a vector kernel for " + type + " " + op);
        final Random random = new Random(11L * type.ordinal() + op.ordinal());
        final int count = 1000;
        final int size = type.size();
        // Destination after the source (inside it: results feed back as operands, so the scalar loop must run) and
        // before it (the vector loop), by whole elements and by a byte; and the very same range.
        final List<int[]> placements = new ArrayList<>(List.of(
            new int[] { size, 0 }, new int[] { 0, size }, new int[] { 0, 1 }, new int[] { 3, 3 }));
        if (!type.isFloatingPoint())
        {
            // Floating-point elements read across a byte boundary are arbitrary bits, NaNs among them. With results
            // fed back, a NaN's payload, which Java leaves open (C2 may swap the operands of an addition), changes
            // the bits of the elements after it, so only integers give a reproducible answer.
            placements.add(new int[] { 1, 0 });
        }
        for (final BufferKind kind : BufferKind.WRITABLE)
        {
            for (final int[] placement : placements)
            {
                final byte[] content = new byte[count * size + 2 * size + 8];
                random.nextBytes(content);
                fillFinite(type, random, content, count + 2);

                final ByteBuffer expected = kind.of(content);
                scalar.reduce(expected, placement[0], expected, placement[1], count);
                final ByteBuffer actual = kind.of(content);
                vector.reduce(actual, placement[0], actual.asReadOnlyBuffer(), placement[1], count);

                final String context = type + " " + op + " " + kind + " dst@" + placement[0] + " src@" + placement[1];
                final byte[] expectedBytes = BufferKind.bytes(expected);
                final byte[] actualBytes = BufferKind.bytes(actual);
                ReducersTest.assertElements(type, expectedBytes, actualBytes, placement[0], count, context);
                ReducersTest.assertUntouchedOutside(expectedBytes, actualBytes, placement[0], count * size, context);
            }
        }
    }

    /**
     * A new vector kernel whose every call runs its vector loop whole: its {@link VectorLoopTrial} ended.
     */
    private static AbstractReducer wholeLoopKernel(final AbstractReducer scalar)
    {
        final AbstractVectorReducer vector = assertInstanceOf(AbstractVectorReducer.class, vectors.kernel(scalar));
        vector.trial().prove();
        return vector;
    }

    /**
     * {@code count} elements from byte 0: random bits for integers, finite values of ordinary magnitude for
     * floating-point types, so that results fed back as operands stay free of NaNs.
     */
    private static void fillFinite(final DataType type, final Random random, final byte[] bytes, final int count)
    {
        final ByteBuffer out = ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder());
        for (int i = 0; i < count; i++)
        {
            final float value = (float)random.nextGaussian();
            final int at = i * type.size();
            switch (type)
            {
                case FP16 -> out.putShort(at, HalfFloats.floatToFp16(value));
                case BF16 -> out.putShort(at, HalfFloats.floatToBf16(value));
                case FP32 -> out.putFloat(at, value);
                case FP64 -> out.putDouble(at, value);
                default -> out.put(at, (byte)random.nextInt());
            }
        }
    }
}
