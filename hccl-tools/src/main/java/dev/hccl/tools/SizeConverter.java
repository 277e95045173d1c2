package dev.hccl.tools;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * A size option of the tools and benchmarks ({@code -b 8 -e 128M}): bytes with an optional K, M or G, as nccl-tests
 * reads them. Public for picocli, which instantiates it.
 */
public final class SizeConverter implements ITypeConverter<Long>
{
    /**
     * For picocli.
     */
    public SizeConverter()
    {
    }

    @Override
    public Long convert(final String value)
    {
        try
        {
            return parse(value);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new TypeConversionException(ex.getMessage());
        }
    }

    /**
     * Parses a size as nccl-tests does: a whole number of bytes with an optional K, M or G (powers of 1024, any case).
     *
     * @param text e.g. {@code 8}, {@code 128M}.
     * @return bytes.
     * @throws IllegalArgumentException when it is not a size.
     */
    public static long parse(final String text)
    {
        final String t = text.trim();
        if (t.isEmpty())
        {
            throw new IllegalArgumentException("empty size");
        }
        final char last = Character.toUpperCase(t.charAt(t.length() - 1));
        final int shift = switch (last)
        {
            case 'K' -> 10;
            case 'M' -> 20;
            case 'G' -> 30;
            default -> 0;
        };
        final String digits = shift == 0 ? t : t.substring(0, t.length() - 1);
        if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '9'))
        {
            throw new IllegalArgumentException("'" + text + "' is not a size: use bytes, or a number with K, M or G");
        }
        try
        {
            final long number = Long.parseLong(digits);
            if (number > (Long.MAX_VALUE >> shift))
            {
                throw new IllegalArgumentException("'" + text + "' is too large");
            }
            return number << shift;
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("'" + text + "' is too large", ex);
        }
    }
}
