/**
 * Reduction and copy kernels: the element-wise inner loops of every reducing collective.
 * <p>
 * {@link dev.hccl.algorithms.kernel.Reducers#of(dev.hccl.api.DataType, dev.hccl.api.ReduceOp)} hands out one cached,
 * stateless {@link dev.hccl.api.spi.Reducer} per data type and operator; {@link dev.hccl.algorithms.kernel.Copies}
 * moves bytes with memmove semantics; {@link dev.hccl.algorithms.kernel.HalfFloats} converts between {@code float} and
 * the two 16-bit floating-point formats.
 * <p>
 * The kernels address memory through {@code jdk.internal.misc.Unsafe} (via Agrona's {@code UnsafeApi}), so the JVM
 * needs {@code --add-opens java.base/jdk.internal.misc=ALL-UNNAMED}. Elements are in native byte order, which is
 * little-endian on every supported platform.
 */
package dev.hccl.algorithms.kernel;
