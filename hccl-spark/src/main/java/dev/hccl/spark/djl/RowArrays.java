package dev.hccl.spark.djl;

import org.apache.spark.sql.Row;
import scala.collection.Seq;

import java.util.Arrays;
import java.util.List;

/**
 * Reads a column of a shard's rows as floats, row after row: what {@link TrainingTask#floats} hands DJL. A value is
 * a number (one float), an array of numbers, or binary (one float a byte, 0 to 255, as image pixels are stored);
 * every row of the column has {@code perRow} of them.
 */
final class RowArrays
{
    private RowArrays()
    {
    }

    /**
     * The column's values.
     *
     * @param rows   the rows, all of one schema.
     * @param column the column's name.
     * @param perRow the floats each row must give.
     * @param rank   this task's rank, for the errors.
     * @return {@code rows.size() * perRow} floats.
     * @throws IllegalArgumentException naming the rank, the column and the row: when the column is missing, a value
     *                                  is null, of another type or of another length.
     */
    static float[] floats(final List<Row> rows, final String column, final int perRow, final int rank)
    {
        final long count = (long)rows.size() * perRow;
        if (count > Integer.MAX_VALUE - 8)
        {
            throw new IllegalArgumentException(where(rank, column) + rows.size() + " rows of " + perRow +
                " floats are more than one Java array holds: train on more, smaller partitions");
        }
        final float[] out = new float[(int)count];
        if (rows.isEmpty())
        {
            return out;
        }
        final int index = indexOf(rows.get(0), column, rank);
        for (int r = 0; r < rows.size(); r++)
        {
            final Row row = rows.get(r);
            final Object value = row.get(index);
            final int at = r * perRow;
            if (value instanceof Number)
            {
                expect(1, perRow, rank, column, r);
                out[at] = ((Number)value).floatValue();
            }
            else if (value instanceof byte[])
            {
                final byte[] bytes = (byte[])value;
                expect(bytes.length, perRow, rank, column, r);
                for (int i = 0; i < bytes.length; i++)
                {
                    out[at + i] = bytes[i] & 0xff;
                }
            }
            else if (value instanceof Seq)
            {
                final List<Object> values = row.getList(index);
                expect(values.size(), perRow, rank, column, r);
                for (int i = 0; i < values.size(); i++)
                {
                    final Object v = values.get(i);
                    if (!(v instanceof Number))
                    {
                        throw new IllegalArgumentException(where(rank, column) + "row " + r + " holds " +
                            (v == null ? "null" : "a " + v.getClass().getSimpleName()) + " at " + i +
                            ": an array column must hold numbers only");
                    }
                    out[at + i] = ((Number)v).floatValue();
                }
            }
            else
            {
                throw new IllegalArgumentException(where(rank, column) + "row " + r + " holds " + (value == null ?
                    "null: drop or fill the rows without one first (DataFrame.na())" : "a " +
                    value.getClass().getName() + ": read numbers, arrays of numbers or binary, so convert the " +
                    "column first (a Spark ML vector with org.apache.spark.ml.functions.vector_to_array)"));
            }
        }
        return out;
    }

    private static int indexOf(final Row first, final String column, final int rank)
    {
        if (first.schema() == null)
        {
            throw new IllegalArgumentException(where(rank, column) + "the rows have no schema: give the " +
                "distributor a DataFrame's rows");
        }
        final String[] names = first.schema().fieldNames();
        final int index = Arrays.asList(names).indexOf(column);
        if (index < 0)
        {
            throw new IllegalArgumentException(where(rank, column) + "no such column; the DataFrame has " +
                Arrays.toString(names));
        }
        return index;
    }

    private static void expect(final int found, final int perRow, final int rank, final String column, final int row)
    {
        if (found != perRow)
        {
            throw new IllegalArgumentException(where(rank, column) + "row " + row + " holds " + found +
                " values where the shape asks for " + perRow);
        }
    }

    private static String where(final int rank, final String column)
    {
        return "DjlDistributor rank " + rank + ", column \"" + column + "\": ";
    }
}
