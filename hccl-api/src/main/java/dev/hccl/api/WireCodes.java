package dev.hccl.api;

import java.util.function.ToIntFunction;

/**
 * Lookup of the enums whose {@code code()} goes on the wire ({@link Operation}, {@link DataType}, {@link ReduceOp}).
 */
final class WireCodes
{
    /** Codes run 0 to 254: 255 stands for none in a message header. */
    private static final int CODES = 255;

    private WireCodes()
    {
    }

    /**
     * The values by code.
     *
     * @param values every value.
     * @param code   each value's code.
     * @param table  an empty array of {@value #CODES} elements to fill.
     * @param <E>    the enum.
     * @return {@code table}.
     * @throws IllegalStateException when a code is out of range or taken twice.
     */
    static <E extends Enum<E>> E[] index(final E[] values, final ToIntFunction<E> code, final E[] table)
    {
        for (final E value : values)
        {
            final int c = code.applyAsInt(value);
            if (c < 0 || c >= CODES || table[c] != null)
            {
                throw new IllegalStateException("code " + c + " of " + value + " is taken or out of range");
            }
            table[c] = value;
        }
        return table;
    }

    /**
     * @param table what {@link #index} filled.
     * @param code  a code, as read from a peer.
     * @param <E>   the enum.
     * @return the value, or null when none has that code.
     */
    static <E> E find(final E[] table, final int code)
    {
        return code < 0 || code >= table.length ? null : table[code];
    }
}
