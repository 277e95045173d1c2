package dev.hccl.api;

import java.io.ObjectInputFilter;

/**
 * What a rank accepts from its peers in {@link ObjectCollectives}' object forms: the most bytes one value may take
 * serialized, how deep its object graph may nest, and a filter of the classes it may hold.
 * <p>
 * A per-call argument, not a setting: how large a value may be depends on what the call carries (a metric, a
 * vocabulary), not on the job, and every rank passes it from the same line of code. Ranks that pass different limits
 * still decide alike, each by the smallest {@code maxBytes} any rank passed, as the size checks run on figures every
 * rank has.
 * <p>
 * {@code filter} is checked beside the JVM-wide filter ({@code jdk.serialFilter}, or
 * {@link ObjectInputFilter.Config#setSerialFilter}), never instead of it: a class either rejects is rejected.
 * References and array lengths need no limit of their own: each takes at least a byte of the value, so an array longer
 * than the value's bytes (which would be allocated before its elements are read) is refused as corrupt.
 *
 * @param maxBytes the most bytes one serialized value may take, 0 to {@link #LARGEST}.
 * @param maxDepth the deepest nesting of objects within a value, at least 1.
 * @param filter   a filter of the classes a value may hold, checked with the JVM-wide one; null for none.
 */
public record ObjectLimits(int maxBytes, int maxDepth, ObjectInputFilter filter)
{
    /**
     * The most bytes one value may take by default: 64 MiB. Metrics, file names and configurations take a few KiB; a
     * value of many MiB is most likely a mistake (a tensor or a data set in a configuration), and every rank holds
     * every rank's value in a gather. Large data belongs in the buffer collectives.
     */
    public static final int DEFAULT_MAX_BYTES = 64 << 20;

    /**
     * The deepest nesting by default: 100, ample for records, maps and lists of configurations, and far from the depth
     * at which reading would overflow a thread's stack.
     */
    public static final int DEFAULT_MAX_DEPTH = 100;

    /** The largest {@code maxBytes}: the longest {@code byte[]} a JVM allocates. */
    public static final int LARGEST = Integer.MAX_VALUE - 8;

    /** The defaults: {@link #DEFAULT_MAX_BYTES}, {@link #DEFAULT_MAX_DEPTH}, no filter but the JVM-wide one. */
    public static final ObjectLimits DEFAULT = new ObjectLimits(DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, null);

    /**
     * Checks the limits.
     *
     * @param maxBytes the most bytes one serialized value may take.
     * @param maxDepth the deepest nesting of objects.
     * @param filter   a filter of classes, or null.
     * @throws IllegalArgumentException when {@code maxBytes} is not 0 to {@link #LARGEST} or {@code maxDepth} is not
     *                                  positive.
     */
    public ObjectLimits
    {
        checkMaxBytes(maxBytes);
        if (maxDepth < 1)
        {
            throw new IllegalArgumentException("maxDepth is " + maxDepth + ": pass at least 1");
        }
    }

    /**
     * These limits with another size limit.
     *
     * @param bytes the most bytes one serialized value may take, 0 to {@link #LARGEST}.
     * @return the new limits.
     * @throws IllegalArgumentException when {@code bytes} is out of range.
     */
    public ObjectLimits withMaxBytes(final int bytes)
    {
        return new ObjectLimits(bytes, maxDepth, filter);
    }

    /**
     * These limits with another depth limit.
     *
     * @param depth the deepest nesting of objects, at least 1.
     * @return the new limits.
     * @throws IllegalArgumentException when {@code depth} is not positive.
     */
    public ObjectLimits withMaxDepth(final int depth)
    {
        return new ObjectLimits(maxBytes, depth, filter);
    }

    /**
     * These limits with a filter of classes, checked with the JVM-wide one: for an allowlist of this call's classes,
     * {@code ObjectInputFilter.Config.createFilter("com.example.Metrics;java.base/*;!*")}.
     *
     * @param classes the filter, or null for none but the JVM-wide one.
     * @return the new limits.
     */
    public ObjectLimits withFilter(final ObjectInputFilter classes)
    {
        return new ObjectLimits(maxBytes, maxDepth, classes);
    }

    /**
     * Checks a size limit as the byte forms take it.
     *
     * @param maxBytes the limit.
     * @throws IllegalArgumentException when it is not 0 to {@link #LARGEST}.
     */
    static void checkMaxBytes(final int maxBytes)
    {
        if (maxBytes < 0 || maxBytes > LARGEST)
        {
            throw new IllegalArgumentException("maxBytes is " + maxBytes + ": pass 0 to " + LARGEST +
                " (the longest byte[] a JVM allocates)");
        }
    }
}
