package dev.hccl.algorithms.kernel;

import java.util.Locale;

/**
 * Decides which {@link KernelFamily} this JVM runs, and loads the vector family's factory when it is the one.
 * <p>
 * The vector kernels are compiled against {@code jdk.incubator.vector}, which the JVM resolves only when started with
 * {@code --add-modules jdk.incubator.vector}. Without it, linking any of their classes would fail, so they are
 * reached only through {@link KernelFactory} and {@link Class#forName(String)}, after
 * {@link ModuleLayer#boot()} has been seen to hold the module. The system property {@value #PROPERTY} overrides the
 * automatic choice: {@code scalar} or {@code vector} (for benchmarks and tests), or {@code auto}, the default.
 */
final class KernelSelection
{
    /** The system property that forces a family: {@code scalar}, {@code vector} or {@code auto}. */
    static final String PROPERTY = "hccl.kernels";

    /**
     * The system property that adds the vector kernels for FP16 and BF16 to the vector family: {@code vector}. They
     * are left out by default; see {@code VectorKernels} for why.
     */
    static final String HALF_PROPERTY = "hccl.kernels.half";

    /** The module the vector kernels are written against. */
    static final String VECTOR_MODULE = "jdk.incubator.vector";

    /** The vector family's {@link KernelFactory}, named rather than referenced so that nothing links it early. */
    static final String VECTOR_FACTORY = "dev.hccl.algorithms.kernel.VectorKernels";

    private static final String HOW_TO_ENABLE = "start the JVM with --add-modules " + VECTOR_MODULE;

    private KernelSelection()
    {
    }

    /**
     * The outcome of {@link #choose(String, boolean)}.
     *
     * @param family the family to run.
     * @param reason why, for the log.
     * @param warn   whether the reason deserves a warning: a request that could not be honoured or was not understood.
     */
    record Choice(KernelFamily family, String reason, boolean warn)
    {
    }

    /**
     * The family to run, from the value of {@value #PROPERTY} and whether the vector module is present; a pure
     * function, so that every combination can be tested in one JVM.
     *
     * @param property            the value of {@value #PROPERTY}, or null when it is not set.
     * @param vectorModulePresent whether {@value #VECTOR_MODULE} is in the boot layer.
     * @return the choice and its reason.
     */
    static Choice choose(final String property, final boolean vectorModulePresent)
    {
        final String value = property == null ? "auto" : property.trim().toLowerCase(Locale.ROOT);
        switch (value)
        {
            case "scalar":
                return new Choice(KernelFamily.SCALAR, "forced by -D" + PROPERTY + "=scalar", false);

            case "vector":
                if (vectorModulePresent)
                {
                    return new Choice(KernelFamily.VECTOR, "forced by -D" + PROPERTY + "=vector", false);
                }
                // Failing here would make every reduction unusable; the warning and the logged family say enough.
                return new Choice(
                    KernelFamily.SCALAR,
                    "-D" + PROPERTY + "=vector, but " + VECTOR_MODULE + " is not resolved: " + HOW_TO_ENABLE,
                    true);

            case "", "auto":
                return automatic(vectorModulePresent, "", false);

            default:
                return automatic(
                    vectorModulePresent,
                    "unknown -D" + PROPERTY + "=" + property + " (expected scalar, vector or auto) ignored; ",
                    true);
        }
    }

    /**
     * Whether {@value #VECTOR_MODULE} is in the boot layer, that is, whether the JVM was started with
     * {@code --add-modules jdk.incubator.vector} (it is not resolved by default).
     *
     * @return true if the vector kernels can be linked.
     */
    static boolean vectorModulePresent()
    {
        return ModuleLayer.boot().findModule(VECTOR_MODULE).isPresent();
    }

    /**
     * Whether the value of {@value #HALF_PROPERTY} asks for the FP16 and BF16 vector kernels.
     *
     * @param property the value, or null when the property is not set.
     * @return true for {@code vector}.
     */
    static boolean halfFloatVectors(final String property)
    {
        return property != null && property.trim().equalsIgnoreCase("vector");
    }

    /**
     * Loads and instantiates the vector family's factory. Call only when {@link #vectorModulePresent()}.
     *
     * @param halfFloats whether the factory hands out vector kernels for FP16 and BF16 too.
     * @return the factory.
     * @throws ReflectiveOperationException if the class cannot be found or instantiated; an exception of its
     *                                      constructor comes wrapped in an
     *                                      {@link java.lang.reflect.InvocationTargetException}.
     * @throws LinkageError                 if it cannot be linked, for instance without the module.
     */
    static KernelFactory vectorFactory(final boolean halfFloats) throws ReflectiveOperationException
    {
        final Class<?> factoryClass = Class.forName(VECTOR_FACTORY, true, KernelSelection.class.getClassLoader());
        return (KernelFactory)factoryClass.getDeclaredConstructor(boolean.class).newInstance(halfFloats);
    }

    private static Choice automatic(final boolean vectorModulePresent, final String prefix, final boolean warn)
    {
        if (vectorModulePresent)
        {
            return new Choice(KernelFamily.VECTOR, prefix + VECTOR_MODULE + " is present", warn);
        }
        return new Choice(
            KernelFamily.SCALAR,
            prefix + VECTOR_MODULE + " is not resolved (" + HOW_TO_ENABLE + " for the vector kernels)",
            warn);
    }
}
