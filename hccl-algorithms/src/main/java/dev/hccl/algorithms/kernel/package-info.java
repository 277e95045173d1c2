/**
 * Reduction and copy kernels: the element-wise inner loops of every reducing collective.
 * <p>
 * {@link dev.hccl.algorithms.kernel.Reducers#of(dev.hccl.api.DataType, dev.hccl.api.ReduceOp)} hands out one cached,
 * stateless {@link dev.hccl.api.spi.Reducer} per data type and operator; {@link dev.hccl.algorithms.kernel.Copies}
 * moves bytes with memmove semantics; {@link dev.hccl.api.HalfFloats} converts between {@code float} and
 * the two 16-bit floating-point formats, {@link dev.hccl.api.Fp8Floats} and the two 8-bit ones.
 * <p>
 * The kernels address memory through {@code jdk.internal.misc.Unsafe} (via Agrona's {@code UnsafeApi}), so the JVM
 * needs {@code --add-opens java.base/jdk.internal.misc=ALL-UNNAMED}, or, with Agrona on the module path,
 * {@code --add-opens java.base/jdk.internal.misc=org.agrona}. Elements are in native byte order, which is
 * little-endian on every supported platform.
 * <p>
 * The reduction kernels come in two families, {@link dev.hccl.algorithms.kernel.KernelFamily}: SIMD loops written with
 * the incubating Vector API, used when the JVM was started with {@code --add-modules jdk.incubator.vector}, and scalar
 * loops otherwise. The vector classes are only ever loaded reflectively, after the module has been found in the boot
 * layer, so the library runs on a JVM without it. The system property {@code hccl.kernels=scalar|vector|auto} forces a
 * family; {@link dev.hccl.algorithms.kernel.Reducers#family()} and an INFO log line say which one runs. The vector
 * family keeps scalar kernels where vectors do not pay (INT64, FP64, and FP8, whose kernels look results up in a
 * table) and, unless {@code hccl.kernels.half=vector}, for
 * FP16 and BF16.
 * <p>
 * Most kernel classes are generated at build time from {@code src/main/kernel-templates/} by
 * {@code src/build/KernelSources.java}: one template per loop shape, so that each loop is written once rather than
 * once per type and operator. Edit the template, not the generated source.
 */
package dev.hccl.algorithms.kernel;

