package dev.hccl.spark;

import org.apache.spark.BarrierTaskContext;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

import java.io.Serializable;
import java.util.Iterator;

/**
 * What each task of a barrier stage does with its partition ({@link SparkHccl#mapPartitions}).
 *
 * @param <T> the element type of the partition.
 * @param <R> the element type of the result.
 */
@FunctionalInterface
public interface BarrierFunction<T, R> extends Serializable
{
    /**
     * Processes one partition.
     *
     * @param ctx       this task's context, for {@link SparkHccl#init(BarrierTaskContext)}.
     * @param partition the partition's elements.
     * @return the task's results.
     * @throws Exception to fail the task, and so the stage.
     */
    Iterator<R> call(BarrierTaskContext ctx, Iterator<T> partition) throws Exception;

    /**
     * The function as Scala's {@code RDDBarrier.mapPartitions} takes it.
     *
     * @param <T> the element type of the partition.
     * @param <R> the element type of the result.
     */
    final class Adapter<T, R> extends AbstractFunction1<scala.collection.Iterator<T>, scala.collection.Iterator<R>>
        implements Serializable
    {
        private static final long serialVersionUID = 1L;
        private final BarrierFunction<T, R> stage;

        Adapter(final BarrierFunction<T, R> stage)
        {
            this.stage = stage;
        }

        @Override
        public scala.collection.Iterator<R> apply(final scala.collection.Iterator<T> partition)
        {
            try
            {
                return CollectionConverters.asScala(stage.call(BarrierTaskContext.get(),
                    CollectionConverters.asJava(partition)));
            }
            catch (final Exception ex)
            {
                // Spark reports the task's own exception, checked or not.
                throw Adapter.<RuntimeException>rethrow(ex);
            }
        }

        /** Throws {@code ex} as it is, checked or not, so that Spark reports the task's own exception. */
        @SuppressWarnings("unchecked")
        static <X extends Throwable> X rethrow(final Throwable ex) throws X
        {
            throw (X)ex;
        }
    }
}
