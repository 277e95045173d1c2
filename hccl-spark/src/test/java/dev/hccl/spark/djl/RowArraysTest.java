package dev.hccl.spark.djl;

import dev.hccl.spark.LocalSpark;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Columns of real rows, as a DataFrame's partition hands them to a task, read as floats: numbers, arrays of numbers
 * and binary; and each way a column can be unfit named with the rank, column and row.
 */
class RowArraysTest
{
    private static final StructType SCHEMA = new StructType()
        .add("label", DataTypes.LongType)
        .add("features", DataTypes.createArrayType(DataTypes.FloatType))
        .add("weights", DataTypes.createArrayType(DataTypes.DoubleType, true))
        .add("pixels", DataTypes.BinaryType)
        .add("name", DataTypes.StringType)
        .add("score", DataTypes.DoubleType, true);

    private static List<Row> rows;

    @BeforeAll
    static void collectRealRows()
    {
        final SparkSession spark = LocalSpark.session();
        rows = spark.createDataFrame(List.of(
            RowFactory.create(2L, new float[] {1, 2, 3}, new Double[] {0.5, 1.5}, new byte[] {0, 127, (byte)255}, "a",
                0.25),
            RowFactory.create(0L, new float[] {4, 5, 6}, new Double[] {2.5, null}, new byte[] {1, 2, 3}, "b", null)),
            SCHEMA).coalesce(1).collectAsList();
    }

    @Test
    void numbersArraysAndBytesBecomeFloatsRowAfterRow()
    {
        assertArrayEquals(new float[] {2, 0}, RowArrays.floats(rows, "label", 1, 0));
        assertArrayEquals(new float[] {1, 2, 3, 4, 5, 6}, RowArrays.floats(rows, "features", 3, 0));
        assertArrayEquals(new float[] {0, 127, 255, 1, 2, 3}, RowArrays.floats(rows, "pixels", 3, 0));
        assertArrayEquals(new float[] {0.5f, 1.5f}, RowArrays.floats(rows.subList(0, 1), "weights", 2, 0));
        assertEquals(0, RowArrays.floats(List.of(), "label", 1, 0).length);
    }

    @Test
    void anUnfitColumnIsNamedWithTheRankAndRow()
    {
        assertEquals("DjlDistributor rank 3, column \"features\": row 0 holds 3 values where the shape asks for 4",
            fails("features", 4));
        assertEquals("DjlDistributor rank 3, column \"label\": row 0 holds 1 values where the shape asks for 2",
            fails("label", 2));
        assertEquals("DjlDistributor rank 3, column \"weights\": row 1 holds null at 1: an array column must hold " +
            "numbers only", fails("weights", 2));
        assertEquals("DjlDistributor rank 3, column \"score\": row 1 holds null: drop or fill the rows without one " +
            "first (DataFrame.na())", fails("score", 1));
        assertEquals("DjlDistributor rank 3, column \"name\": row 0 holds a java.lang.String: read numbers, arrays " +
            "of numbers or binary, so convert the column first (a Spark ML vector with " +
            "org.apache.spark.ml.functions.vector_to_array)", fails("name", 1));
        assertEquals("DjlDistributor rank 3, column \"pixel\": no such column; the DataFrame has " +
            Arrays.toString(SCHEMA.fieldNames()), fails("pixel", 3));
    }

    private static String fails(final String column, final int perRow)
    {
        return assertThrows(IllegalArgumentException.class, () -> RowArrays.floats(rows, column, perRow, 3))
            .getMessage();
    }
}
