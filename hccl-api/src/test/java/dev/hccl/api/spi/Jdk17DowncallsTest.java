package dev.hccl.api.spi;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * JDK 17's binding of the C library through its incubating foreign linker: it copies what {@code memmove} copies, and
 * where it cannot bind, the reason names the flag to add. The tests on JDK 17 run in a JVM with the module (the root
 * pom's jdk17 profile), so that CI on JDK 17 takes this path.
 */
class Jdk17DowncallsTest
{
    private static final boolean JDK17 = Runtime.version().feature() == 17;

    @Test
    void memmoveCopiesOverlappingBytesOnJdk17() throws Throwable
    {
        assumeTrue(JDK17, "JDK 17 only");
        final MethodHandle memmove = Jdk17Downcalls.bindVoid("memmove", 3);
        final sun.misc.Unsafe unsafe = unsafe();
        final int bytes = 10_000;
        final long memory = unsafe.allocateMemory(bytes);
        try
        {
            for (int i = 0; i < bytes; i++)
            {
                unsafe.putByte(memory + i, (byte)(i * 31 + 7));
            }
            // 5,000 bytes from offset 1,000 to offset 1,100: a forward copy would smear the first 100.
            memmove.invokeExact(memory + 1100, memory + 1000, 5000L);
            for (int i = 0; i < bytes; i++)
            {
                final int source = i >= 1100 && i < 6100 ? i - 100 : i;
                assertEquals((byte)(source * 31 + 7), unsafe.getByte(memory + i), "byte " + i);
            }
        }
        finally
        {
            unsafe.freeMemory(memory);
        }
        assertTrue(NativeCopy.available(), String.valueOf(NativeCopy.unavailable()));
    }

    @Test
    void aFunctionTheLibraryLacksIsNamed()
    {
        assumeTrue(JDK17, "JDK 17 only");
        final UnsupportedOperationException ex = assertThrows(UnsupportedOperationException.class,
            () -> Jdk17Downcalls.bindVoid("hccl_no_such_function", 1));
        assertTrue(ex.getMessage().contains("no hccl_no_such_function"), ex.getMessage());
    }

    @Test
    void otherJdksAreToldItIsJdk17s()
    {
        assumeTrue(!JDK17, "JDKs other than 17");
        final UnsupportedOperationException ex =
            assertThrows(UnsupportedOperationException.class, () -> Jdk17Downcalls.bindVoid("memmove", 3));
        assertTrue(ex.getMessage().contains("JDK " + Runtime.version().feature()), ex.getMessage());
    }

    @Test
    void withoutTheModuleTheReasonNamesIt() throws Exception
    {
        assumeTrue(JDK17, "JDK 17 only");
        final String out = probe(List.of("--enable-native-access=ALL-UNNAMED"));
        assertTrue(out.contains("available=false") && out.contains("--add-modules=jdk.incubator.foreign"), out);
    }

    @Test
    void withoutNativeAccessTheReasonNamesIt() throws Exception
    {
        assumeTrue(JDK17, "JDK 17 only");
        final String out = probe(List.of("--add-modules=jdk.incubator.foreign"));
        assertTrue(out.contains("available=false") && out.contains("--enable-native-access=ALL-UNNAMED"), out);
    }

    @Test
    void withBothFlagsItBinds() throws Exception
    {
        assumeTrue(JDK17, "JDK 17 only");
        final String out = probe(List.of("--add-modules=jdk.incubator.foreign", "--enable-native-access=ALL-UNNAMED"));
        assertTrue(out.contains("available=true unavailable=null"), out);
    }

    /** Runs {@link NativeCopyProbe} in a JVM of this JDK with {@code options}, and returns what it printed. */
    private static String probe(final List<String> options) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-XX:TieredStopAtLevel=1");
        command.addAll(options);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(NativeCopyProbe.class.getName());
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().remove("JDK_JAVA_OPTIONS");
        builder.environment().remove("JAVA_TOOL_OPTIONS");
        final Process process = builder.start();
        final String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "probe JVM timed out");
        assertEquals(0, process.exitValue(), out);
        return out;
    }

    private static sun.misc.Unsafe unsafe() throws ReflectiveOperationException
    {
        final Field field = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
        field.setAccessible(true);
        return (sun.misc.Unsafe)field.get(null);
    }
}
