package dev.hccl.api.spi;

import java.lang.invoke.MethodHandle;
import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.util.Optional;

/**
 * The C library's {@code memmove} for copies between native memory, bound through the JDK's foreign function API
 * (final from JDK 22; on JDK 17 its incubating first version, {@link Jdk17Downcalls}) with no native library of ours:
 * for the algorithms' copies ({@code Copies}) and the shared-memory transport's copies into its rings.
 * <p>
 * Why: the JVM's copy ({@code Unsafe.copyMemory}) stores a vector register at a time, and each store first reads its
 * cache line for ownership; where the line is held by another core, as a node arena's region is by the member that
 * read it last, that read is a transfer between cores. The C library's copy uses the processor's string copy
 * ({@code rep movsb}) where it is fast, which writes whole lines without reading them first: the node arena's
 * all-reduce in C (tools/arena-allreduce.c) runs much slower with a vector loop for its copies than with
 * {@code memcpy} (docs/PERFORMANCE.md has the figures). A shared-memory ring is the same case: its lines were last
 * read by the receiving core.
 * <p>
 * Bound as {@link ForeignCalls} says, once, when this class loads, to a constant handle
 * {@code (long dst, long src, long bytes)void}, which C2 calls as it would a method. From JDK 22 the call is
 * {@code critical} (no change of the thread's state): callers copy at most {@link #MAX_BYTES} a call, so a safepoint
 * waits no longer than for the JVM's own copy of as much. JDK 17's is an ordinary downcall, some tens of nanoseconds
 * more, which {@link #MIN_BYTES} covers.
 * <p>
 * Needs native access, since the JDK warns on stderr when a library binds without it, and on JDK 17 the incubating
 * module: without {@code --enable-native-access} (which {@code bin/hccl-java} passes), on JDK 17 without
 * {@code --add-modules=jdk.incubator.foreign} (which it passes there), on JDKs 18 to 21, or elsewhere than Linux on
 * x86-64 and AArch64, nothing is bound and callers keep the JVM's copy ({@code Unsafe.copyMemory}).
 */
public final class NativeCopy
{
    /** From how many bytes a copy is worth the call: below, the call's own cost is more than it saves. */
    public static final int MIN_BYTES = 4096;
    /** The most bytes a call copies ({@link #copy}); larger copies take several calls. */
    public static final int MAX_BYTES = 1 << 20;

    /** {@code (long dst, long src, long bytes)void}, or null where not bound. */
    private static final MethodHandle MEMMOVE;
    /** Why not bound, or null. */
    private static final String UNAVAILABLE;

    static
    {
        MethodHandle memmove = null;
        String unavailable = null;
        try
        {
            memmove = bind();
        }
        catch (final UnsupportedOperationException ex)
        {
            unavailable = ex.getMessage();
        }
        MEMMOVE = memmove;
        UNAVAILABLE = unavailable;
    }

    private NativeCopy()
    {
    }

    /**
     * Whether callers take the C library's copy now: JDK 17's downcall is a chain of method handles that runs
     * interpreted, far slower than the JVM's copy, until the JIT has compiled it, so there the reductions' warm-up
     * ({@code KernelWarmUp}) calls it until it runs compiled and then says so ({@link #markCompiled}); before, and
     * where the warm-up's budget ran out first, callers keep the JVM's copy. From JDK 22, from the first call.
     */
    private static volatile boolean compiled;
    /** Whether {@link #compiled} applies: JDK 17 only, so that elsewhere {@link #ready()} folds to a constant. */
    private static final boolean WAITS_FOR_COMPILE = Runtime.version().feature() == 17;

    /**
     * @return whether copies between native memory can go through the C library.
     */
    public static boolean available()
    {
        return null != MEMMOVE;
    }

    /**
     * @return whether copies between native memory take the C library's copy now: it is bound, and its call runs
     *     compiled.
     */
    public static boolean ready()
    {
        return null != MEMMOVE && (!WAITS_FOR_COMPILE || compiled);
    }

    /**
     * Says that the call runs compiled, as the warm-up found: callers take it from now on.
     */
    public static void markCompiled()
    {
        compiled = true;
    }

    /**
     * @return why they cannot, or null when they can.
     */
    public static String unavailable()
    {
        return UNAVAILABLE;
    }

    /**
     * {@code memmove(dst, src, bytes)}: correct for overlapping ranges. Only where {@link #available()}; the caller
     * keeps the memory alive and in range ({@link java.lang.ref.Reference#reachabilityFence} for a direct buffer's).
     *
     * @param dst   the destination's address.
     * @param src   the source's address.
     * @param bytes how many, at most {@link #MAX_BYTES}.
     */
    public static void copy(final long dst, final long src, final long bytes)
    {
        try
        {
            MEMMOVE.invokeExact(dst, src, bytes);
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("memmove failed to call", ex);
        }
    }

    private static MethodHandle bind()
    {
        if (Runtime.version().feature() == 17)
        {
            ForeignCalls.requirePlatform("memmove");
            return Jdk17Downcalls.bindVoid("memmove", 3);
        }
        ForeignCalls.requireBindable(NativeCopy.class, "memmove");
        try
        {
            final Class<?> linkerClass = Class.forName("java.lang.foreign.Linker");
            final Class<?> optionClass = Class.forName("java.lang.foreign.Linker$Option");
            final Class<?> descriptorClass = Class.forName("java.lang.foreign.FunctionDescriptor");
            final Class<?> layoutClass = Class.forName("java.lang.foreign.MemoryLayout");
            final Class<?> segmentClass = Class.forName("java.lang.foreign.MemorySegment");
            final Class<?> lookupClass = Class.forName("java.lang.foreign.SymbolLookup");
            final Object linker = linkerClass.getMethod("nativeLinker").invoke(null);
            final Object lookup = linkerClass.getMethod("defaultLookup").invoke(linker);
            final Optional<?> symbol =
                (Optional<?>)lookupClass.getMethod("find", String.class).invoke(lookup, "memmove");
            if (symbol.isEmpty())
            {
                throw new UnsupportedOperationException("the C library has no memmove");
            }
            final Object longLayout = Class.forName("java.lang.foreign.ValueLayout").getField("JAVA_LONG").get(null);
            final Object parameters = Array.newInstance(layoutClass, 3);
            for (int i = 0; i < 3; i++)
            {
                Array.set(parameters, i, longLayout);
            }
            // void: memmove's result, its first argument, is not needed.
            final Object descriptor =
                descriptorClass.getMethod("ofVoid", parameters.getClass()).invoke(null, parameters);
            final Object options = Array.newInstance(optionClass, 1);
            Array.set(options, 0, optionClass.getMethod("critical", boolean.class).invoke(null, false));
            final Method downcall = linkerClass.getMethod("downcallHandle", segmentClass, descriptorClass,
                options.getClass());
            return (MethodHandle)downcall.invoke(linker, symbol.get(), descriptor, options);
        }
        catch (final ReflectiveOperationException | RuntimeException | LinkageError ex)
        {
            if (ex instanceof UnsupportedOperationException)
            {
                throw (UnsupportedOperationException)ex;
            }
            throw new UnsupportedOperationException("the JDK's foreign function API did not bind memmove: " + ex, ex);
        }
    }
}
