package dev.hccl.spark;

import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;

/**
 * The tests' Spark: local mode with four task slots, so that a barrier stage of four tasks fits, and up to four
 * attempts a task ({@code local[N,F]}; plain {@code local[N]} fails the job at the first failure, where a cluster
 * retries). One session for every test class of the JVM, as Spark allows one context at a time.
 */
public final class LocalSpark
{
    public static final int SLOTS = 4;

    private LocalSpark()
    {
    }

    public static SparkSession session()
    {
        return SparkSession.builder()
            .master("local[" + SLOTS + ",4]")
            .appName("hccl-spark tests")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", String.valueOf(SLOTS))
            .getOrCreate();
    }

    static JavaSparkContext context()
    {
        return JavaSparkContext.fromSparkContext(session().sparkContext());
    }
}
