package dev.hccl.api.spi;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodType;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Optional;

/**
 * Binds a C library function on JDK 17 through that JDK's incubating foreign linker ({@code jdk.incubator.foreign},
 * JEP 412), whose API differs from the final one of JDK 22 ({@link NativeCopy} binds either). Reached by reflection,
 * as {@link ForeignCalls} says, since the library compiles against no incubating API but the Vector API.
 * <p>
 * Needs {@code --add-modules=jdk.incubator.foreign}, which resolves the module (bin/lib/java.sh gives it on JDK 17
 * only: other JDKs have another API or none, and refuse to start with a module they lack), and
 * {@code --enable-native-access=ALL-UNNAMED}, without which JDK 17 refuses the linker to the caller's module. The
 * call is an ordinary downcall (the thread leaves Java for its duration), so a safepoint never waits on it.
 */
final class Jdk17Downcalls
{
    private static final String MODULE = "jdk.incubator.foreign";

    private Jdk17Downcalls()
    {
    }

    /**
     * Binds {@code function}, which takes {@code parameters} C {@code long}s (pointers and sizes included, as
     * {@link ForeignCalls} says) and returns nothing, to a handle of type {@code (long...)void}.
     *
     * @param function   the C library's function.
     * @param parameters how many arguments it takes.
     * @return the handle.
     * @throws UnsupportedOperationException saying why it cannot be bound here, and what would change it.
     */
    static MethodHandle bindVoid(final String function, final int parameters)
    {
        if (Runtime.version().feature() != 17)
        {
            throw new UnsupportedOperationException("the incubating foreign linker bound here is JDK 17's; this is " +
                "JDK " + Runtime.version().feature());
        }
        if (ModuleLayer.boot().findModule(MODULE).isEmpty())
        {
            throw new UnsupportedOperationException("JDK 17's foreign linker (" + MODULE + ") is not resolved: " +
                "start java with --add-modules=" + MODULE + " (bin/hccl-java does on JDK 17)");
        }
        try
        {
            final Class<?> linkerClass = Class.forName(MODULE + ".CLinker");
            final Object linker = invoke(linkerClass.getMethod("getInstance"), null);
            final Object lookup = invoke(linkerClass.getMethod("systemLookup"), null);
            final Optional<?> symbol = (Optional<?>)invoke(
                Class.forName(MODULE + ".SymbolLookup").getMethod("lookup", String.class), lookup, function);
            if (symbol.isEmpty())
            {
                throw new UnsupportedOperationException("the C library has no " + function);
            }
            // C_LONG is 64 bits on Linux on x86-64 and AArch64, the platforms ForeignCalls allows.
            final Object longLayout = linkerClass.getField("C_LONG").get(null);
            final Object layouts = Array.newInstance(Class.forName(MODULE + ".MemoryLayout"), parameters);
            for (int i = 0; i < parameters; i++)
            {
                Array.set(layouts, i, longLayout);
            }
            final Class<?> descriptorClass = Class.forName(MODULE + ".FunctionDescriptor");
            final Object descriptor = invoke(descriptorClass.getMethod("ofVoid", layouts.getClass()), null, layouts);
            final Class<?>[] longs = new Class<?>[parameters];
            Arrays.fill(longs, long.class);
            final Method downcall = linkerClass.getMethod("downcallHandle", Class.forName(MODULE + ".Addressable"),
                MethodType.class, descriptorClass);
            return (MethodHandle)invoke(downcall, linker, symbol.get(), MethodType.methodType(void.class, longs),
                descriptor);
        }
        catch (final IllegalCallerException ex)
        {
            throw new UnsupportedOperationException("native access is not enabled: start java with " +
                "--enable-native-access=ALL-UNNAMED (bin/hccl-java does)", ex);
        }
        catch (final ReflectiveOperationException | RuntimeException | LinkageError ex)
        {
            if (ex instanceof UnsupportedOperationException)
            {
                throw (UnsupportedOperationException)ex;
            }
            throw new UnsupportedOperationException("JDK 17's foreign linker did not bind " + function + ": " + ex,
                ex);
        }
    }

    /** {@link Method#invoke}, with what the method threw rethrown as itself where it is unchecked. */
    private static Object invoke(final Method method, final Object target, final Object... args)
        throws ReflectiveOperationException
    {
        try
        {
            return method.invoke(target, args);
        }
        catch (final InvocationTargetException ex)
        {
            if (ex.getCause() instanceof RuntimeException)
            {
                throw (RuntimeException)ex.getCause();
            }
            throw ex;
        }
    }
}
