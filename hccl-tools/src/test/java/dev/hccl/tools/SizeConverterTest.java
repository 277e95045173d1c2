package dev.hccl.tools;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine.TypeConversionException;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Sizes as nccl-tests reads them.
 */
class SizeConverterTest
{
    @ParameterizedTest
    @CsvSource({"8, 8", "0, 0", "1K, 1024", "4k, 4096", "128M, 134217728", "2m, 2097152", "1G, 1073741824",
        "3g, 3221225472"})
    void sizesTakeBinarySuffixes(final String text, final long bytes)
    {
        assertEquals(bytes, SizeConverter.parse(text));
    }

    @Test
    void malformedSizesAreRefused()
    {
        for (final String bad : List.of("", "K", "1.5M", "-8", "8T", "12 M", "99999999999999999999"))
        {
            assertThrows(IllegalArgumentException.class, () -> SizeConverter.parse(bad), bad);
        }
    }

    @Test
    void aMalformedOptionIsAConversionErrorThatSaysWhatASizeIs()
    {
        final TypeConversionException ex = assertThrows(TypeConversionException.class,
            () -> new SizeConverter().convert("8T"));
        assertEquals("'8T' is not a size: use bytes, or a number with K, M or G", ex.getMessage());
        assertEquals(2048L, new SizeConverter().convert("2K"));
    }
}
