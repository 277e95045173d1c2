package dev.hccl.api;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InvalidClassException;
import java.io.NotSerializableException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.OutputStream;
import java.util.Arrays;

/**
 * A value as the object forms send it: Java serialization, written up to a size limit and read through a
 * {@link PeerDataFilter}. Writing does not throw: a value that does not serialize becomes a failure that the byte
 * forms send in its place, so that every rank fails with it. Reading throws an {@link HcclException} naming the rank
 * the bytes came from.
 */
final class SerialForm
{
    private SerialForm()
    {
    }

    /**
     * Serializes {@code value}, keeping the bytes only up to {@code maxBytes}: a larger value is measured, not held.
     *
     * @param rank     this rank, for the failure's description.
     * @param value    the value, null included.
     * @param maxBytes the limit.
     * @return the bytes; the length alone when over {@code maxBytes}; or the failure of a value that does not
     *         serialize.
     */
    static ByteExchange.Contribution write(final int rank, final Object value, final int maxBytes)
    {
        final Bounded out = new Bounded(maxBytes);
        try (ObjectOutputStream objects = new ObjectOutputStream(out))
        {
            objects.writeObject(value);
        }
        catch (final NotSerializableException ex)
        {
            return ByteExchange.Contribution.failed("rank " + rank + "'s value, " + a(value) + ", does not " +
                "serialize: " + ex + ": make that class Serializable, or its field transient", ex);
        }
        catch (final IOException | RuntimeException ex)
        {
            return ByteExchange.Contribution.failed("rank " + rank + "'s value, " + a(value) + ", does not " +
                "serialize: " + ex, ex);
        }
        return out.contribution();
    }

    /**
     * Deserializes a value that came from rank {@code from}.
     *
     * @param comm   the communicator, for this rank.
     * @param call   the call, for messages.
     * @param from   the rank the bytes came from.
     * @param bytes  the value's bytes.
     * @param type   the class every value must be an instance of.
     * @param limits the limits and filter to read through.
     * @param <T>    the values' type.
     * @return the value, null when null was sent.
     * @throws HcclException {@link ErrorCode#E_PARA} naming this rank, {@code from}, the class where known and what to
     *                       change, with the reader's exception as cause: a class missing or different here, one the
     *                       filters reject, a value too deep, corrupt bytes, a {@code readObject} that threw, or a
     *                       value not of {@code type}.
     */
    static <T> T read(final ObjectCollectives comm, final String call, final int from, final byte[] bytes,
        final Class<T> type, final ObjectLimits limits)
    {
        final PeerDataFilter filter = new PeerDataFilter(bytes.length, limits);
        final Object value;
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes)))
        {
            in.setObjectInputFilter(filter);
            value = in.readObject();
        }
        catch (final ClassNotFoundException ex)
        {
            throw failure(comm, call, from, "its class " + ex.getMessage() + " is not on this rank's class path: " +
                "give every rank the same classes", ex);
        }
        catch (final IOException | RuntimeException ex)
        {
            throw failure(comm, call, from, why(filter, ex), ex);
        }
        if (null != value && !type.isInstance(value))
        {
            throw failure(comm, call, from, "it is " + a(value) + ", not a " + type.getName() + ": pass a " +
                type.getName() + " on every rank, or " + Object.class.getName() + ".class here", null);
        }
        return type.cast(value);
    }

    private static String why(final PeerDataFilter filter, final Exception ex)
    {
        if (null != filter.rejection())
        {
            return filter.rejection();
        }
        if (ex instanceof InvalidClassException invalid && null != invalid.classname)
        {
            return "its class " + invalid.classname + " differs from this rank's (" + ex + "): give every rank the " +
                "same version of it";
        }
        return "" + ex;
    }

    private static HcclException failure(
        final ObjectCollectives comm, final String call, final int from, final String why, final Exception cause)
    {
        return new HcclException(ErrorCode.E_PARA, comm.rank(), from, null, HcclException.NO_SEQUENCE,
            call + ": the value from rank " + from + " does not deserialize: " + why, cause);
    }

    private static String a(final Object value)
    {
        return null == value ? "null" : "a " + value.getClass().getName();
    }

    /**
     * A byte array stream that keeps at most {@code limit} bytes and counts the rest, so that a huge value is not held
     * whole, and a value that does not serialize still says so (the JDK writes its exception into the stream, which
     * must not fail in turn).
     */
    private static final class Bounded extends OutputStream
    {
        private final int limit;
        private byte[] buf;
        private long count;

        Bounded(final int limit)
        {
            this.limit = limit;
            this.buf = new byte[Math.min(limit, 256)];
        }

        @Override
        public void write(final int b)
        {
            if (room(1))
            {
                buf[(int)count] = (byte)b;
            }
            count++;
        }

        @Override
        public void write(final byte[] b, final int off, final int len)
        {
            if (room(len))
            {
                System.arraycopy(b, off, buf, (int)count, len);
            }
            count += len;
        }

        ByteExchange.Contribution contribution()
        {
            return count > limit ? ByteExchange.Contribution.oversized(count) :
                ByteExchange.Contribution.of(Arrays.copyOf(buf, (int)count));
        }

        /** Whether {@code len} more bytes are kept; the buffer goes once the limit is passed. */
        private boolean room(final int len)
        {
            final long needed = count + len;
            if (needed > limit)
            {
                buf = null;
                return false;
            }
            if (needed > buf.length)
            {
                buf = Arrays.copyOf(buf, (int)Math.min(limit, Math.max(needed, 2L * buf.length)));
            }
            return true;
        }
    }
}
