package dev.hccl.api;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * {@link ObjectCollectives}' calls: the arguments checked on the calling rank before anything is sent (an
 * {@link IllegalArgumentException} naming the call, the rank and the argument, as {@link ArrayCollectives}' are),
 * then the bytes exchanged by {@link ByteExchange} and, for objects, written and read by {@link SerialForm}.
 */
final class ObjectForms
{
    private ObjectForms()
    {
    }

    static byte[][] allGatherBytes(final ObjectCollectives comm, final byte[] mine, final int maxBytes)
    {
        final String call = "allGatherBytes";
        checkMaxBytes(comm, call, maxBytes);
        return ByteExchange.allGather(comm, call, bytes(comm, mine, "mine"), maxBytes);
    }

    static byte[] broadcastBytes(final ObjectCollectives comm, final byte[] value, final int root, final int maxBytes)
    {
        final String call = "broadcastBytes";
        checkRoot(comm, call, root);
        checkMaxBytes(comm, call, maxBytes);
        final ByteExchange.Contribution mine = comm.rank() == root ? bytes(comm, value, "value") : null;
        return ByteExchange.broadcast(comm, call, mine, root, maxBytes);
    }

    static <T> List<T> allGatherObject(
        final ObjectCollectives comm, final T value, final Class<T> type, final ObjectLimits limits)
    {
        final String call = "allGatherObject(" + (null == type ? null : type.getName()) + ")";
        checkTypeAndLimits(comm, call, type, limits);
        final byte[][] all = ByteExchange.allGather(comm, call, SerialForm.write(comm.rank(), value,
            limits.maxBytes()), limits.maxBytes());
        final List<T> values = new ArrayList<>(all.length);
        for (int r = 0; r < all.length; r++)
        {
            values.add(SerialForm.read(comm, call, r, all[r], type, limits));
        }
        return Collections.unmodifiableList(values);
    }

    static <T> T broadcastObject(
        final ObjectCollectives comm, final T value, final Class<T> type, final int root, final ObjectLimits limits)
    {
        final String call = "broadcastObject(" + (null == type ? null : type.getName()) + ")";
        checkRoot(comm, call, root);
        checkTypeAndLimits(comm, call, type, limits);
        final ByteExchange.Contribution mine = comm.rank() == root ?
            SerialForm.write(comm.rank(), value, limits.maxBytes()) : null;
        final byte[] bytes = ByteExchange.broadcast(comm, call, mine, root, limits.maxBytes());
        return SerialForm.read(comm, call, root, bytes, type, limits);
    }

    /** A byte form's contribution: a null array is a failure every rank reports, not one this rank fails alone. */
    private static ByteExchange.Contribution bytes(final ObjectCollectives comm, final byte[] b, final String name)
    {
        return null != b ? ByteExchange.Contribution.of(b) : ByteExchange.Contribution.failed("rank " +
            comm.rank() + " passed null as " + name + ": pass an empty array for no bytes", null);
    }

    private static void checkRoot(final ObjectCollectives comm, final String call, final int root)
    {
        if (root < 0 || root >= comm.worldSize())
        {
            throw new IllegalArgumentException(where(comm, call) + "root is " + root + ", but the ranks are 0 to " +
                (comm.worldSize() - 1) + ": pass one of them");
        }
    }

    private static void checkMaxBytes(final ObjectCollectives comm, final String call, final int maxBytes)
    {
        try
        {
            ObjectLimits.checkMaxBytes(maxBytes);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException(where(comm, call) + ex.getMessage(), ex);
        }
    }

    private static void checkTypeAndLimits(
        final ObjectCollectives comm, final String call, final Class<?> type, final ObjectLimits limits)
    {
        if (null == type)
        {
            throw new IllegalArgumentException(where(comm, call) + "type must not be null: pass the values' class, " +
                "Object.class for any");
        }
        if (type.isPrimitive())
        {
            throw new IllegalArgumentException(where(comm, call) + "type is " + type + ", which no object is: " +
                "pass its wrapper class");
        }
        if (null == limits)
        {
            throw new IllegalArgumentException(where(comm, call) + "limits must not be null: pass " +
                "ObjectLimits.DEFAULT");
        }
    }

    private static String where(final ObjectCollectives comm, final String call)
    {
        return call + " on rank " + comm.rank() + ": ";
    }
}
