package dev.hccl.api.spi;

import java.util.Locale;

/**
 * What the library's calls into the C library through the JDK's foreign function API (final from JDK 22) share:
 * whether this JVM can bind them at all ({@link NativeCopy}, the shared-memory transport's cross-memory attach).
 * <p>
 * The library is Java 17 bytecode, so the API is reached by reflection, and each function is bound to a handle of
 * primitive types only, pointers passed as {@code long}s: Linux's C calling conventions on x86-64 and AArch64 pass them
 * exactly as pointers (both in general registers), so only those two are bound.
 */
public final class ForeignCalls
{
    private ForeignCalls()
    {
    }

    /**
     * Checks that calls can be bound here: Linux on x86-64 or AArch64, JDK 22 or newer, and native access enabled for
     * the caller's module (without it the JDK warns on stderr when a library binds).
     *
     * @param caller the class that binds: its module's native access counts.
     * @param what   what it binds, for the message.
     * @throws UnsupportedOperationException saying why not, and what would change it.
     */
    public static void requireBindable(final Class<?> caller, final String what)
    {
        requirePlatform(what);
        if (Runtime.version().feature() < 22)
        {
            throw new UnsupportedOperationException("the JDK's foreign function API is final from JDK 22; this is " +
                "JDK " + Runtime.version().feature());
        }
        final boolean enabled;
        try
        {
            enabled = (Boolean)Module.class.getMethod("isNativeAccessEnabled").invoke(caller.getModule());
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new UnsupportedOperationException("cannot tell whether native access is enabled: " + ex, ex);
        }
        if (!enabled)
        {
            throw new UnsupportedOperationException("native access is not enabled: start java with " +
                "--enable-native-access=ALL-UNNAMED (bin/hccl-java does)");
        }
    }

    /**
     * Checks that this is a platform whose C calling convention the bindings assume: Linux on x86-64 or AArch64.
     *
     * @param what what is bound, for the message.
     * @throws UnsupportedOperationException naming the platform.
     */
    public static void requirePlatform(final String what)
    {
        final String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        final String arch = System.getProperty("os.arch", "");
        if (!os.startsWith("linux") || !("amd64".equals(arch) || "x86_64".equals(arch) || "aarch64".equals(arch)))
        {
            throw new UnsupportedOperationException(what + " is bound on Linux on x86-64 and AArch64 only, not " + os +
                " on " + arch);
        }
    }
}
