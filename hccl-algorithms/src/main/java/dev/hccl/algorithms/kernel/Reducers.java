package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.Reducer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.ref.Reference;
import java.lang.reflect.InvocationTargetException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Factory of the reduction kernels, one per {@link DataType} and {@link ReduceOp}, plus the divide that finishes
 * {@link ReduceOp#AVG}.
 * <p>
 * Kernels are created once, when this class loads, and shared: they hold no state (but FP8's lookup table, built
 * once on first use and never changed), so any thread may call any of them at any time.
 * <p>
 * They come from one of two families (see {@link KernelFamily}): Vector API kernels when the JVM was started with
 * {@code --add-modules jdk.incubator.vector} (for the types where they beat the scalar ones, the scalar kernels for
 * the others), scalar ones otherwise; the system property {@code hccl.kernels} ({@code scalar}, {@code vector} or
 * {@code auto}) overrides the choice, and {@code hccl.kernels.half=vector} adds the FP16 and BF16 vector kernels. The family and the reason for it are logged
 * once, at DEBUG, when this class loads. Both families give bit-identical results for every input that does not
 * produce a NaN (a NaN result is a NaN in both, but Java does not pin down NaN payloads, not even between the
 * interpreter and the JIT).
 */
public final class Reducers
{
    /** The largest {@code int} up to which every {@code int} converts to {@code float} exactly: 2^24. */
    static final int MAX_EXACT_FLOAT_INT = 1 << 24;

    private static final Logger LOGGER = LoggerFactory.getLogger(Reducers.class);
    private static final ReduceOp[] OPS = ReduceOp.values();
    private static final Reducer[][] KERNELS;
    private static final KernelFamily FAMILY;
    private static final String DESCRIPTION;

    static
    {
        final KernelSelection.Choice choice = KernelSelection.choose(
            System.getProperty(KernelSelection.PROPERTY), KernelSelection.vectorModulePresent());
        String reason = choice.reason();
        boolean warn = choice.warn();
        KernelFactory factory = null;
        Reducer[][] vectorKernels = null;
        if (choice.family() == KernelFamily.VECTOR)
        {
            try
            {
                factory = KernelSelection.vectorFactory(
                    KernelSelection.halfFloatVectors(System.getProperty(KernelSelection.HALF_PROPERTY)));
                vectorKernels = newKernels(factory);
            }
            catch (final ReflectiveOperationException | LinkageError | RuntimeException ex)
            {
                // The scalar kernels are always correct; a vector family that cannot start must not take them down.
                final Throwable cause = ex instanceof InvocationTargetException ? ex.getCause() : ex;
                reason = reason + ", but the vector kernels failed to start (" + cause + ")";
                warn = true;
            }
        }
        FAMILY = vectorKernels == null ? KernelFamily.SCALAR : KernelFamily.VECTOR;
        KERNELS = vectorKernels == null ? newKernels(null) : vectorKernels;

        if (FAMILY == KernelFamily.VECTOR)
        {
            final List<String> scalarTypes = new ArrayList<>();
            for (final DataType type : DataType.values())
            {
                if (!(KERNELS[type.ordinal()][ReduceOp.SUM.ordinal()] instanceof AbstractVectorReducer))
                {
                    scalarTypes.add(type.toString());
                }
            }
            DESCRIPTION = "vector (" + factory.description() + ")" +
                (scalarTypes.isEmpty() ? "" : ", scalar for " + String.join(", ", scalarTypes)) + ": " + reason;
        }
        else
        {
            DESCRIPTION = "scalar: " + reason;
        }
        final String message = "hccl-java reduction kernels: " + DESCRIPTION;
        if (!warn)
        {
            LOGGER.debug(message);
        }
        else if (LOGGER.isWarnEnabled())
        {
            LOGGER.warn(message);
        }
        else
        {
            // No SLF4J binding (or warnings switched off): a family that could not start must not pass unseen.
            System.err.println("WARNING: " + message);
        }
    }

    private Reducers()
    {
    }

    /**
     * The kernel for a data type and operator: {@code dst[i] = dst[i] op src[i]}.
     * <p>
     * For {@link ReduceOp#AVG} this is the {@link ReduceOp#SUM} kernel: the caller sums and calls
     * {@link #divide(ByteBuffer, int, int, DataType, int)} once on the final result, or for FP8 on each input first.
     *
     * @param type the element type.
     * @param op   the operator.
     * @return the shared, stateless, thread-safe kernel.
     * @throws IllegalArgumentException if {@code op} is {@link ReduceOp#AVG} and {@code type} is not floating-point.
     * @throws NullPointerException     if an argument is null.
     */
    public static Reducer of(final DataType type, final ReduceOp op)
    {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(op, "op");
        final Reducer kernel = KERNELS[type.ordinal()][op.ordinal()];
        if (kernel == null)
        {
            throw new IllegalArgumentException(op + " is not supported for " + type + " (floating-point types only)");
        }
        return kernel;
    }

    /**
     * The kernel family that {@link #of(DataType, ReduceOp)} hands out in this JVM, chosen once when this class loads.
     *
     * @return {@link KernelFamily#VECTOR} or {@link KernelFamily#SCALAR}.
     */
    public static KernelFamily family()
    {
        return FAMILY;
    }

    /**
     * The family in use, the types it leaves to scalar kernels, and why, as logged when this class loads: for reports
     * such as hccl-bench's header.
     *
     * @return for instance {@code scalar: jdk.incubator.vector is not resolved (...)}.
     */
    public static String description()
    {
        return DESCRIPTION;
    }

    /**
     * Divides {@code count} elements in place by {@code divisor}: {@link ReduceOp#AVG}'s division of the sum, or for
     * FP8, whose sum would saturate, of each input before it.
     * <p>
     * FP32 and FP64 results are the correctly rounded quotients; FP16, BF16 and FP8 elements are divided in
     * {@code float} and rounded back to nearest even (FP8 saturating, as its kernels do). A divisor of 1 leaves every
     * element as it is, bit for bit (a single rank's average is its input). Neither the buffer's position nor its
     * limit changes.
     *
     * @param buf     the elements.
     * @param index   absolute byte offset of the first element.
     * @param count   elements.
     * @param type    the element type; must be floating-point.
     * @param divisor the divisor, typically the number of ranks; at least 1.
     * @throws IllegalArgumentException         if {@code type} is not floating-point, {@code divisor} is below 1 or
     *                                          {@code count} is negative.
     * @throws IndexOutOfBoundsException        if the range is not within {@code [0, limit)} of {@code buf}.
     * @throws java.nio.ReadOnlyBufferException if {@code buf} is read-only.
     * @throws NullPointerException             if {@code buf} or {@code type} is null.
     */
    public static void divide(
        final ByteBuffer buf, final int index, final int count, final DataType type, final int divisor)
    {
        Objects.requireNonNull(buf, "buf");
        Objects.requireNonNull(type, "type");
        if (!type.isFloatingPoint())
        {
            throw new IllegalArgumentException(
                "divide (AVG) is not supported for " + type + " (floating-point types only)");
        }
        if (divisor < 1)
        {
            throw new IllegalArgumentException("divisor must be >= 1: " + divisor);
        }
        if (count < 0)
        {
            throw new IllegalArgumentException("count must be >= 0: " + count);
        }
        BufferAccess.checkWritable(buf);
        BufferAccess.checkRange(buf, index, (long)count * type.size(), "buf");
        if (divisor == 1)
        {
            return;
        }

        final Object base = BufferAccess.base(buf);
        final long offset = BufferAccess.offset(buf, index);
        switch (type)
        {
            case FP32 -> Fp32Reducer.divide(base, offset, count, divisor);
            case FP64 -> Fp64Reducer.divide(base, offset, count, divisor);
            case FP16 -> Fp16Reducer.divide(base, offset, count, divisor);
            case BF16 -> Bf16Reducer.divide(base, offset, count, divisor);
            case FP8_E4M3, FP8_E5M2 -> Fp8Reducer.divide(type, base, offset, count, divisor);
            default -> throw new IllegalStateException("no divide for " + type);
        }
        // The loop holds only a raw address; keep a direct buffer's memory from being freed under it.
        Reference.reachabilityFence(buf);
    }

    /**
     * Every kernel of a family, indexed by type and operator ordinals.
     *
     * @param factory the family's factory, or null for the scalar family.
     * @return the kernels; AVG shares the SUM kernel of floating-point types and is null for the others.
     */
    private static Reducer[][] newKernels(final KernelFactory factory)
    {
        final Reducer[][] kernels = new Reducer[DataType.values().length][OPS.length];
        for (final DataType type : DataType.values())
        {
            for (final ReduceOp op : OPS)
            {
                if (op != ReduceOp.AVG)
                {
                    final AbstractReducer scalar = scalarKernel(type, op);
                    kernels[type.ordinal()][op.ordinal()] = factory == null ? scalar : factory.kernel(scalar);
                }
            }
            if (type.isFloatingPoint())
            {
                // AVG is a SUM that the caller completes with divide(): of the result, or for FP8 of each input.
                kernels[type.ordinal()][ReduceOp.AVG.ordinal()] = kernels[type.ordinal()][ReduceOp.SUM.ordinal()];
            }
        }
        return kernels;
    }

    /**
     * A new scalar kernel, whatever the family in use: the fallback of every vector kernel, and the baseline that tests
     * and the throughput probe compare the vector kernels with.
     *
     * @param type the element type.
     * @param op   the operator; not {@link ReduceOp#AVG}.
     * @return the kernel.
     */
    static AbstractReducer scalarKernel(final DataType type, final ReduceOp op)
    {
        return switch (type)
        {
            case INT8, UINT8 -> new Int8Reducer(type, op);
            case INT16 -> new Int16Reducer(op);
            case INT32 -> new Int32Reducer(op);
            case INT64 -> new Int64Reducer(op);
            case FP16 -> new Fp16Reducer(op);
            case BF16 -> new Bf16Reducer(op);
            case FP32 -> new Fp32Reducer(op);
            case FP64 -> new Fp64Reducer(op);
            case FP8_E4M3, FP8_E5M2 -> new Fp8Reducer(type, op);
        };
    }
}
