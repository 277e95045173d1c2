package dev.hccl.api.spi;

/**
 * Prints whether {@link NativeCopy} bound {@code memmove} in this JVM, and why not: {@link Jdk17DowncallsTest} starts
 * it with and without the flags that JDK 17's binding needs.
 */
public final class NativeCopyProbe
{
    private NativeCopyProbe()
    {
    }

    /**
     * @param args none.
     */
    public static void main(final String[] args)
    {
        System.out.println("available=" + NativeCopy.available() + " unavailable=" + NativeCopy.unavailable());
    }
}
