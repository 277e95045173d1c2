package dev.hccl.api;

import java.io.ObjectInputFilter;

/**
 * The filter one value from a peer is read through: {@link ObjectLimits}' depth, an array no longer than the value's
 * bytes, then the JVM-wide filter and the limits' own, merged as {@link ObjectInputFilter#merge} does (rejected when
 * any rejects, allowed when any allows, undecided otherwise), so that a {@code jdk.serialFilter} allowlist applies
 * here as to any stream. It records why it rejected, for the message: the JDK's own says only
 * {@code filter status: REJECTED}. One per stream.
 */
final class PeerDataFilter implements ObjectInputFilter
{
    /** The value's length: no array in it can be longer. */
    private final long valueBytes;
    /** The deepest nesting accepted. */
    private final int maxDepth;
    /** The JVM-wide filter, or null. */
    private final ObjectInputFilter jvmWide;
    /** The limits' filter, or null. */
    private final ObjectInputFilter given;
    /** Why the filter rejected, or null while it has not. */
    private String rejection;

    /**
     * A filter for one value.
     *
     * @param valueBytes the value's length in bytes.
     * @param limits     the limits.
     */
    PeerDataFilter(final long valueBytes, final ObjectLimits limits)
    {
        this.valueBytes = valueBytes;
        this.maxDepth = limits.maxDepth();
        this.jvmWide = ObjectInputFilter.Config.getSerialFilter();
        this.given = limits.filter();
    }

    @Override
    public Status checkInput(final FilterInfo info)
    {
        if (info.depth() > maxDepth)
        {
            return reject("it nests " + info.depth() + " objects deep, deeper than maxDepth " + maxDepth +
                ": pass a larger ObjectLimits.maxDepth on every rank, or send a flatter value");
        }
        if (info.arrayLength() > valueBytes)
        {
            return reject("it declares an array of " + info.arrayLength() + " elements in " + valueBytes +
                " bytes, which no serialized value does: the bytes are corrupt");
        }
        final Status global = null == jvmWide ? Status.UNDECIDED : jvmWide.checkInput(info);
        if (global == Status.REJECTED)
        {
            return reject(classOf(info) + " is rejected by the JVM-wide filter (jdk.serialFilter): allow it there " +
                "on every rank, or send another");
        }
        final Status own = null == given ? Status.UNDECIDED : given.checkInput(info);
        if (own == Status.REJECTED)
        {
            return reject(classOf(info) + " is rejected by ObjectLimits.filter: allow it there on every rank, or " +
                "send another");
        }
        return global == Status.ALLOWED || own == Status.ALLOWED ? Status.ALLOWED : Status.UNDECIDED;
    }

    /**
     * Why the filter rejected.
     *
     * @return the reason, or null when it has not rejected.
     */
    String rejection()
    {
        return rejection;
    }

    private Status reject(final String why)
    {
        if (null == rejection)
        {
            rejection = why;
        }
        return Status.REJECTED;
    }

    private static String classOf(final FilterInfo info)
    {
        final Class<?> c = info.serialClass();
        if (null == c)
        {
            return "its size (depth " + info.depth() + ", " + info.references() + " references, " +
                info.streamBytes() + " bytes)";
        }
        return "its class " + c.getTypeName();
    }
}
