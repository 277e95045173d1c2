package dev.hccl.transport.shm;

import dev.hccl.api.spi.ForeignCalls;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.util.Optional;

/**
 * The kernel's cross-memory attach calls, {@code process_vm_readv} and {@code prctl(PR_SET_PTRACER)}, bound through
 * the JDK's foreign function API (final from JDK 22) with no native library of ours.
 * <p>
 * Looked up once per process ({@link #bind()}), as {@link ForeignCalls} says, each function bound to a handle of
 * primitive types only, which {@code invokeExact} calls without reflection and without allocating. {@code errno} is
 * captured into memory of the caller's ({@link Reader}), read only when a call failed.
 * <p>
 * Binding needs native access: the JDK warns on stderr when a library binds without it, so without
 * {@code --enable-native-access} (which {@code bin/hccl-java} passes) nothing is bound and the caller falls back.
 */
final class CmaCalls
{
    /** {@code PR_SET_PTRACER} of {@code <linux/prctl.h>}. */
    private static final int PR_SET_PTRACER = 0x59616d61;
    /** {@code errno} values the readers tell apart. */
    static final int EPERM = 1;
    static final int ESRCH = 3;
    static final int EFAULT = 14;
    static final int ENOSYS = 38;

    private static volatile Object bound;

    private final MethodHandle readv;
    private final MethodHandle prctl;
    private final Method arenaAllocate;
    private final Object globalArena;
    private final Object stateLayout;
    private final Method getInt;
    private final Object intLayout;
    private final long errnoOffset;

    private CmaCalls(final MethodHandle readv, final MethodHandle prctl, final Method arenaAllocate, final Object globalArena, final Object stateLayout, final Method getInt,
        final Object intLayout, final long errnoOffset)
    {
        this.readv = readv;
        this.prctl = prctl;
        this.arenaAllocate = arenaAllocate;
        this.globalArena = globalArena;
        this.stateLayout = stateLayout;
        this.getInt = getInt;
        this.intLayout = intLayout;
        this.errnoOffset = errnoOffset;
    }

    /**
     * The calls of this process, bound on the first call.
     *
     * @return them.
     * @throws UnsupportedOperationException saying why they cannot be bound here, and what would change it.
     */
    static CmaCalls bind()
    {
        Object calls = bound;
        if (null == calls)
        {
            synchronized (CmaCalls.class)
            {
                calls = bound;
                if (null == calls)
                {
                    try
                    {
                        calls = lookUp();
                    }
                    catch (final UnsupportedOperationException ex)
                    {
                        calls = ex.getMessage();
                    }
                    bound = calls;
                }
            }
        }
        if (calls instanceof String)
        {
            throw new UnsupportedOperationException((String)calls);
        }
        return (CmaCalls)calls;
    }

    private static CmaCalls lookUp()
    {
        ForeignCalls.requireBindable(CmaCalls.class, "cross-memory attach");
        try
        {
            final Class<?> linkerClass = Class.forName("java.lang.foreign.Linker");
            final Class<?> optionClass = Class.forName("java.lang.foreign.Linker$Option");
            final Class<?> descriptorClass = Class.forName("java.lang.foreign.FunctionDescriptor");
            final Class<?> layoutClass = Class.forName("java.lang.foreign.MemoryLayout");
            final Class<?> pathClass = Class.forName("java.lang.foreign.MemoryLayout$PathElement");
            final Class<?> valueClass = Class.forName("java.lang.foreign.ValueLayout");
            final Class<?> intClass = Class.forName("java.lang.foreign.ValueLayout$OfInt");
            final Class<?> segmentClass = Class.forName("java.lang.foreign.MemorySegment");
            final Class<?> lookupClass = Class.forName("java.lang.foreign.SymbolLookup");
            final Class<?> arenaClass = Class.forName("java.lang.foreign.Arena");
            final Object linker = linkerClass.getMethod("nativeLinker").invoke(null);
            final Object lookup = linkerClass.getMethod("defaultLookup").invoke(linker);
            final Method find = lookupClass.getMethod("find", String.class);
            final Object longLayout = valueClass.getField("JAVA_LONG").get(null);
            final Object intLayout = valueClass.getField("JAVA_INT").get(null);
            final Method of = descriptorClass.getMethod("of", layoutClass, Array.newInstance(layoutClass, 0).getClass());
            final Method downcall = linkerClass.getMethod("downcallHandle", segmentClass, descriptorClass,
                Array.newInstance(optionClass, 0).getClass());

            final Object captureErrno = optionClass.getMethod("captureCallState", String[].class)
                .invoke(null, (Object)new String[] {"errno"});
            // ssize_t process_vm_readv(pid_t, const struct iovec *, unsigned long, const struct iovec *,
            // unsigned long, unsigned long)
            final MethodHandle readv = (MethodHandle)downcall.invoke(linker, symbol(find, lookup, "process_vm_readv"),
                of.invoke(null, longLayout, layouts(layoutClass, intLayout, longLayout, longLayout, longLayout,
                    longLayout, longLayout)), options(optionClass, captureErrno));
            // int prctl(int option, ...): variadic from its second argument.
            final Object variadic = optionClass.getMethod("firstVariadicArg", int.class).invoke(null, 1);
            final MethodHandle prctl = (MethodHandle)downcall.invoke(linker, symbol(find, lookup, "prctl"),
                of.invoke(null, intLayout, layouts(layoutClass, intLayout, longLayout)),
                options(optionClass, captureErrno, variadic));

            final Object stateLayout = optionClass.getMethod("captureStateLayout").invoke(null);
            final Object errnoPath = pathClass.getMethod("groupElement", String.class).invoke(null, "errno");
            final Object pathArray = Array.newInstance(pathClass, 1);
            Array.set(pathArray, 0, errnoPath);
            final long errnoOffset = (long)layoutClass.getMethod("byteOffset", pathArray.getClass())
                .invoke(stateLayout, pathArray);
            return new CmaCalls(readv, prctl, arenaClass.getMethod("allocate", layoutClass),
                arenaClass.getMethod("ofAuto").invoke(null), stateLayout,
                segmentClass.getMethod("get", intClass, long.class), intLayout, errnoOffset);
        }
        catch (final ReflectiveOperationException | RuntimeException | LinkageError ex)
        {
            if (ex instanceof UnsupportedOperationException)
            {
                throw (UnsupportedOperationException)ex;
            }
            throw new UnsupportedOperationException("the JDK's foreign function API did not bind process_vm_readv: " +
                ex, ex);
        }
    }

    private static Object symbol(final Method find, final Object lookup, final String name)
        throws ReflectiveOperationException
    {
        final Optional<?> found = (Optional<?>)find.invoke(lookup, name);
        return found.orElseThrow(() -> new UnsupportedOperationException("the C library has no " + name));
    }

    private static Object layouts(final Class<?> layoutClass, final Object... layouts)
    {
        final Object array = Array.newInstance(layoutClass, layouts.length);
        for (int i = 0; i < layouts.length; i++)
        {
            Array.set(array, i, layouts[i]);
        }
        return array;
    }

    private static Object options(final Class<?> optionClass, final Object... options)
    {
        return layouts(optionClass, options);
    }

    /**
     * Calls of one caller, with its own memory for {@code errno}: not thread-safe.
     *
     * @return them.
     */
    Reader reader()
    {
        try
        {
            final Object state = arenaAllocate.invoke(globalArena, stateLayout);
            return new Reader(state, MethodHandles.insertArguments(readv, 0, state),
                MethodHandles.insertArguments(prctl, 0, state));
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new IllegalStateException("cannot allocate the memory errno is captured into", ex);
        }
    }

    /**
     * The calls, bound to one caller's {@code errno} memory. Not thread-safe: one caller at a time.
     */
    final class Reader
    {
        private final Object state;
        /** {@code (int pid, long localIov, long localCount, long remoteIov, long remoteCount, long flags) -> long}. */
        private final MethodHandle readv;
        /** {@code (int option, long argument) -> int}. */
        private final MethodHandle prctl;

        private Reader(final Object state, final MethodHandle readv, final MethodHandle prctl)
        {
            this.state = state;
            this.readv = readv;
            this.prctl = prctl;
        }

        /**
         * {@code process_vm_readv} of one local and one remote {@code iovec}.
         *
         * @param pid       the process read.
         * @param localIov  the address of the local {@code struct iovec}.
         * @param remoteIov the address of the remote one.
         * @return the bytes copied, or -1 ({@link #errno()} says why).
         */
        long readv(final int pid, final long localIov, final long remoteIov)
        {
            try
            {
                return (long)readv.invokeExact(pid, localIov, 1L, remoteIov, 1L, 0L);
            }
            catch (final Throwable ex)
            {
                throw new IllegalStateException("process_vm_readv failed to call", ex);
            }
        }

        /**
         * {@code prctl(PR_SET_PTRACER, pid)}: lets that process and its descendants read this one's memory where
         * Yama's {@code ptrace_scope} is 1.
         *
         * @param pid the process.
         * @return 0, or -1 ({@link #errno()} says why).
         */
        int setPtracer(final long pid)
        {
            try
            {
                return (int)prctl.invokeExact(PR_SET_PTRACER, pid);
            }
            catch (final Throwable ex)
            {
                throw new IllegalStateException("prctl failed to call", ex);
            }
        }

        /**
         * @return the {@code errno} the last failed call left.
         */
        int errno()
        {
            try
            {
                return (int)getInt.invoke(state, intLayout, errnoOffset);
            }
            catch (final ReflectiveOperationException ex)
            {
                return -1;
            }
        }
    }
}
