package dev.hccl.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The arithmetic and the text of the table in isolation: bus-bandwidth factors, size-to-count conventions, the
 * header, row and footer lines against lines written out by hand from nccl-tests' output.
 */
@Timeout(30)
class TableTest
{
    @ParameterizedTest(name = "{0} n={1}")
    @CsvSource({
        "ALL_REDUCE, 1, 0.0", "ALL_REDUCE, 2, 1.0", "ALL_REDUCE, 4, 1.5", "ALL_REDUCE, 8, 1.75",
        "ALL_GATHER, 2, 0.5", "ALL_GATHER, 4, 0.75", "REDUCE_SCATTER, 4, 0.75", "REDUCE_SCATTER, 3, 0.6666666666666666",
        "ALLTOALL, 8, 0.875", "ALLTOALL, 1, 0.0",
        "BROADCAST, 4, 1.0", "REDUCE, 4, 1.0", "SENDRECV, 4, 1.0", "BARRIER, 4, 0.0"})
    void busBandwidthFactorsAreNcclTests(final BenchOp op, final int ranks, final double factor)
    {
        assertEquals(factor, op.busBwFactor(ranks), 1e-15);
    }

    @ParameterizedTest(name = "{0} {1} B of {2}-byte elements over {3} ranks")
    @CsvSource({
        // op, size, element size, ranks -> send, recv, count, send in-place offset, recv in-place offset, size column
        "ALL_REDUCE,     1048576, 4, 4, 262144, 262144, 262144,     0,     0, 1048576",
        "ALL_REDUCE,           7, 4, 4,      1,      1,      1,     0,     0,       4",
        "BROADCAST,          256, 8, 3,     32,     32,     32,     0,     0,     256",
        "REDUCE,             256, 2, 3,    128,    128,    128,     0,     0,     256",
        "SENDRECV,            64, 1, 2,     64,     64,     64,     0,     0,      64",
        // all_gather: size is the gathered buffer, count is per rank
        "ALL_GATHER,     1048576, 4, 4,  65536, 262144,  65536, 65536,     0, 1048576",
        "ALL_GATHER,          64, 4, 3,      5,     15,      5,     5,     0,      60",
        "ALL_GATHER,           8, 4, 3,      0,      0,      0,     0,     0,       0",
        // reduce_scatter: size is the input, count is what each rank receives
        "REDUCE_SCATTER, 1048576, 4, 4, 262144,  65536,  65536,     0, 65536, 1048576",
        // alltoall: size is the whole buffer, count is per block
        "ALLTOALL,          4096, 8, 4,    512,    512,    128,     0,     0,    4096",
        "BARRIER,           4096, 1, 4,      0,      0,      0,     0,     0,       0"})
    void sizesMapOntoBuffersAsNcclTests(
        final BenchOp op, final long size, final int elementSize, final int ranks, final long send, final long recv,
        final long count, final long sendOffset, final long recvOffset, final long sizeColumn)
    {
        final SizeLayout layout = op.layout(size, elementSize, ranks);

        assertEquals(new SizeLayout(send, recv, count, sendOffset, recvOffset), layout);
        assertEquals(sizeColumn, layout.bytes(elementSize));
    }

    @Test
    void headerIsNcclTestsHeader()
    {
        assertEquals(List.of(
            "#                                                              out-of-place                       " +
                "in-place          ",
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw" +
                "   busbw #wrong",
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)" +
                "  (GB/s)       "),
            Table.header());
    }

    @Test
    void rowLinesUpUnderTheHeader()
    {
        final BenchRow row = new BenchRow("default", 1048576, 262144, "float", "sum", -1,
            new Measurement(123.456, 8.4935, 12.7403, 0L, 20), new Measurement(12345.6, 0.0849, 0.1274, 0L, 20));

        assertEquals("     1048576        262144     float     sum      -1    123.5    8.49   12.74      0    12346" +
            "    0.08    0.13      0", Table.row(row));
        // Every column ends where its header ends.
        final String names = Table.header().get(1);
        final String line = Table.row(row);
        assertEquals(names.length(), line.length());
        for (final String column : List.of("size", "count", "type", "redop", "root", "time", "algbw", "busbw"))
        {
            final int end = names.indexOf(column) + column.length();
            assertTrue(line.charAt(end - 1) != ' ' && line.charAt(end) == ' ', column + " in\n" + names + "\n" + line);
        }
    }

    @Test
    void rowOfARootedOperationWithUncheckedResults()
    {
        final BenchRow row = new BenchRow("ring", 8, 1, "double", "none", 3,
            new Measurement(9.87654, 0.00081, 0.00081, null, 20), new Measurement(99.999, 0.0, 0.0, null, 20));

        assertEquals("           8             1    double    none       3     9.88    0.00    0.00    N/A   100.00" +
            "    0.00    0.00    N/A", Table.row(row));
    }

    @ParameterizedTest
    @CsvSource({"9.999, '  10.00'", "100, '  100.0'", "9999.94, ' 9999.9'", "10000, '  10000'", "1234567.8, '1234568'"})
    void timeHasFewerDecimalsAsItGrows(final double us, final String text)
    {
        assertEquals(text, Table.time(us));
    }

    @Test
    void footerSaysOkOrFailed()
    {
        assertEquals(List.of("# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 3.51013", "#"),
            Table.footer(0, 3.510134, null));
        assertEquals(List.of("# Out of bounds values : 17 FAILED", "# Avg bus bandwidth    : 12.5 OK", "#"),
            Table.footer(17, 12.5, 12.5));
        assertEquals("# Avg bus bandwidth    : 0.041185 FAILED", Table.footer(0, 0.041185, 0.05).get(1));
    }

    @ParameterizedTest
    @CsvSource({
        // Expected values printed by C's printf("%g").
        "3.510134, 3.51013", "0, 0", "100, 100", "123456.7, 123457", "1234567, 1.23457e+06", "0.0001, 0.0001",
        "0.00001234, 1.234e-05", "0.5, 0.5", "999999.5, 1e+06", "0.041185, 0.041185", "1e-300, 1e-300",
        "-2.25, -2.25", "12.5, 12.5"})
    void averageIsPrintedAsPrintfG(final double value, final String text)
    {
        assertEquals(text, Table.g(value));
    }
}
