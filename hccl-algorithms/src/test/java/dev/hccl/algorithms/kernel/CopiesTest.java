package dev.hccl.algorithms.kernel;

import dev.hccl.api.spi.NativeCopy;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.Arrays;
import java.util.Random;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

@Timeout(120)
class CopiesTest
{
    /**
     * The C library's copy, where bound, from the first test: on JDK 17 callers otherwise wait for the warm-up to find
     * its call compiled ({@link NativeCopy#ready()}), and these tests check results, which do not depend on that.
     */
    @BeforeAll
    static void takeTheCLibrarysCopyWhereBound()
    {
        NativeCopy.markCompiled();
    }

    /** Up to more than three chunks, so that chunk order matters for overlapping moves. */
    private static final int[] SIZES = { 0, 1, 7, 4097, 3 * Copies.CHUNK + 5 };

    @Test
    void copiesBetweenEveryKindOfBuffer()
    {
        final Random random = new Random(1);
        for (final int size : SIZES)
        {
            for (final BufferKind dstKind : BufferKind.WRITABLE)
            {
                for (final BufferKind srcKind : BufferKind.values())
                {
                    final int dstIndex = 3;
                    final int srcIndex = 6;
                    final byte[] dstContent = new byte[dstIndex + size + 10];
                    final byte[] srcContent = new byte[srcIndex + size + 4];
                    random.nextBytes(dstContent);
                    random.nextBytes(srcContent);
                    final ByteBuffer dst = dstKind.of(dstContent);
                    final ByteBuffer src = srcKind.of(srcContent);
                    final int dstPosition = dst.position();

                    Copies.copy(dst, dstIndex, src, srcIndex, size);

                    final byte[] expected = dstContent.clone();
                    System.arraycopy(srcContent, srcIndex, expected, dstIndex, size);
                    final String context = size + " bytes " + srcKind + " -> " + dstKind;
                    assertArrayEquals(expected, BufferKind.bytes(dst), context);
                    assertArrayEquals(srcContent, BufferKind.bytes(src), context + ": source changed");
                    assertEquals(dstPosition, dst.position(), context);
                    assertEquals(dstContent.length, dst.limit(), context);
                }
            }
        }
    }

    @Test
    void movesOverlappingRangesForwardAndBackward()
    {
        final Random random = new Random(2);
        final int[] shifts = { 1, 7, 1000, Copies.CHUNK - 1, Copies.CHUNK + 3 };
        // The source seen as the same buffer, a duplicate, or a read-only view: all share the destination's memory.
        final UnaryOperator<ByteBuffer> same = b -> b;
        final UnaryOperator<ByteBuffer> duplicate = ByteBuffer::duplicate;
        final UnaryOperator<ByteBuffer> readOnly = ByteBuffer::asReadOnlyBuffer;
        final String[] viewNames = { "same", "duplicate", "read-only view" };
        final int length = 3 * Copies.CHUNK + 5;
        for (final BufferKind kind : BufferKind.WRITABLE)
        {
            int view = 0;
            for (final UnaryOperator<ByteBuffer> asSource : Arrays.asList(same, duplicate, readOnly))
            {
                for (final int shift : shifts)
                {
                    for (final int direction : new int[] { 1, -1 })
                    {
                        final byte[] content = new byte[length + 2 * shift + 16];
                        random.nextBytes(content);
                        final int srcIndex = 8 + shift;
                        final int dstIndex = srcIndex + direction * shift;
                        final ByteBuffer buffer = kind.of(content);

                        Copies.copy(buffer, dstIndex, asSource.apply(buffer), srcIndex, length);

                        final byte[] expected = content.clone();
                        System.arraycopy(expected, srcIndex, expected, dstIndex, length); // memmove semantics
                        assertArrayEquals(expected, BufferKind.bytes(buffer),
                            kind + " " + viewNames[view] + " shift " + direction * shift);
                    }
                }
                view++;
            }
        }
    }

    @Test
    void copiesOverlapBetweenSlicesOfTheSameMemory()
    {
        final Random random = new Random(3);
        final byte[] content = new byte[10_000];
        random.nextBytes(content);
        for (final BufferKind kind : new BufferKind[] { BufferKind.DIRECT, BufferKind.HEAP })
        {
            final ByteBuffer whole = kind.of(content);
            // dst starts 100 bytes into src's memory: a naive forward copy would smear the first 100 bytes.
            final ByteBuffer src = whole.duplicate().position(1000).slice();
            final ByteBuffer dst = whole.duplicate().position(1100).slice();

            Copies.copy(dst, 0, src, 0, 5000);

            final byte[] expected = content.clone();
            System.arraycopy(expected, 1000, expected, 1100, 5000);
            assertArrayEquals(expected, BufferKind.bytes(whole), kind.toString());
        }
    }

    /**
     * Copies between native memory go through the C library wherever the JDK can bind it (the tests above then check
     * that path), so that a JDK on which the binding fails does not quietly fall back to the slower copy.
     */
    @Test
    void copiesBetweenNativeMemoryThroughTheCLibraryWhereTheJdkBindsIt()
    {
        final String os = System.getProperty("os.name", "");
        final String arch = System.getProperty("os.arch", "");
        final int feature = Runtime.version().feature();
        // JDK 17 binds through its incubating linker, whose module the root pom's jdk17 profile resolves.
        final boolean jdkBinds = feature >= 22 ||
            feature == 17 && ModuleLayer.boot().findModule("jdk.incubator.foreign").isPresent();
        final boolean bindable = jdkBinds && os.startsWith("Linux") &&
            ("amd64".equals(arch) || "aarch64".equals(arch)) && nativeAccess();
        assertEquals(bindable, NativeCopy.available(), String.valueOf(NativeCopy.unavailable()));
        assertEquals(bindable, null == NativeCopy.unavailable());
    }

    /**
     * Whether this JDK lets the library's (unnamed) module call native code: from JDK 22 as the module says, on JDK 17
     * as its command line does (it has no such method); false on the JDKs between.
     */
    private static boolean nativeAccess()
    {
        if (Runtime.version().feature() == 17)
        {
            return ManagementFactory.getRuntimeMXBean().getInputArguments()
                .contains("--enable-native-access=ALL-UNNAMED");
        }
        try
        {
            return (Boolean)Module.class.getMethod("isNativeAccessEnabled").invoke(CopiesTest.class.getModule());
        }
        catch (final ReflectiveOperationException ex)
        {
            return false;
        }
    }

    @Test
    void sameRangeIsLeftAsItIs()
    {
        final byte[] content = new byte[4096];
        new Random(4).nextBytes(content);
        for (final BufferKind kind : BufferKind.WRITABLE)
        {
            final ByteBuffer buffer = kind.of(content);
            Copies.copy(buffer, 10, buffer, 10, 4000);
            Copies.copy(buffer, 10, buffer.asReadOnlyBuffer(), 10, 4000);
            assertArrayEquals(content, BufferKind.bytes(buffer), kind.toString());
        }
    }

    @Test
    void refusesBadArguments()
    {
        final ByteBuffer dst = ByteBuffer.allocateDirect(64);
        final ByteBuffer src = ByteBuffer.allocate(64);
        assertThrows(ReadOnlyBufferException.class, () -> Copies.copy(dst.asReadOnlyBuffer(), 0, src, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> Copies.copy(dst, 0, src, 0, -1));
        assertThrows(IndexOutOfBoundsException.class, () -> Copies.copy(dst, 1, src, 0, 64));
        assertThrows(IndexOutOfBoundsException.class, () -> Copies.copy(dst, 0, src, 1, 64));
        assertThrows(IndexOutOfBoundsException.class, () -> Copies.copy(dst, -1, src, 0, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> Copies.copy(dst, 0, src.duplicate().limit(10), 0, 11));
        assertThrows(IndexOutOfBoundsException.class, () -> Copies.copy(dst, 0, src, 0, Integer.MAX_VALUE));
        assertThrows(NullPointerException.class, () -> Copies.copy(dst, 0, null, 0, 1));

        src.put(63, (byte)42);
        Copies.copy(dst, 0, src, 0, 64);
        assertEquals(42, dst.get(63));
    }
}
