package dev.hccl.api;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InvalidClassException;
import java.io.NotSerializableException;
import java.io.ObjectInputFilter;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.io.StreamCorruptedException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How the object forms write a value and read a peer's: limits, the filter and what each failure says, without a
 * communicator (the collectives themselves are hccl-checks' {@code ObjectCollectivesTest}).
 */
@Timeout(60)
class SerialFormTest
{
    /** Rank 0 of 4, for messages; its collectives are never called here. */
    private static final ObjectCollectives RANK_0 = new ObjectCollectives()
    {
        @Override
        public int rank()
        {
            return 0;
        }

        @Override
        public int worldSize()
        {
            return 4;
        }

        @Override
        public void allGather(final ByteBuffer send, final ByteBuffer recv, final long sendCount, final DataType type)
        {
            throw new UnsupportedOperationException();
        }

        @Override
        public void allGatherV(final ByteBuffer send, final long sendCount, final ByteBuffer recv,
            final long[] recvCounts, final long[] recvDispls, final DataType type)
        {
            throw new UnsupportedOperationException();
        }

        @Override
        public void broadcast(final ByteBuffer buf, final long count, final DataType type, final int root)
        {
            throw new UnsupportedOperationException();
        }
    };

    record Metrics(int step, double loss, String file) implements Serializable
    {
    }

    /** A class whose name is patched in its bytes to one that does not exist. */
    record Aaaaaaaa(int x) implements Serializable
    {
    }

    /** A linked list of its own, as deep as it is long. */
    record Link(Link next) implements Serializable
    {
    }

    static final class NotSerializable
    {
    }

    /** A class, not a record: a record's serialVersionUID is not compared. */
    static final class Versioned implements Serializable
    {
        private static final long serialVersionUID = 7L;
    }

    record Holder(Object inside) implements Serializable
    {
    }

    @Test
    void aValueRoundTrips()
    {
        final Map<String, Object> config = new HashMap<>();
        config.put("lr", 0.1);
        config.put("files", new ArrayList<>(List.of("a.parquet", "b.parquet")));
        config.put("metrics", new Metrics(3, 0.25, "run-3.log"));
        final byte[] bytes = written(config, ObjectLimits.DEFAULT_MAX_BYTES);
        assertEquals(config, SerialForm.read(RANK_0, "call", 1, bytes, Map.class, ObjectLimits.DEFAULT));
        assertNull(SerialForm.read(RANK_0, "call", 1, written(null, 100), Metrics.class, ObjectLimits.DEFAULT));
    }

    @Test
    void aValueThatDoesNotSerializeIsAFailureNamingTheRankAndTheClass()
    {
        final ByteExchange.Contribution c = SerialForm.write(2, new Holder(new NotSerializable()), 1000);
        assertNull(c.bytes());
        assertInstanceOf(NotSerializableException.class, c.cause());
        assertEquals("rank 2's value, a " + Holder.class.getName() + ", does not serialize: " +
            "java.io.NotSerializableException: " + NotSerializable.class.getName() + ": make that class " +
            "Serializable, or its field transient", c.failure());
    }

    @Test
    void overTheLimitOnlyTheLengthIsKept()
    {
        final int length = written(new byte[1000], ObjectLimits.DEFAULT_MAX_BYTES).length;
        assertEquals(length, written(new byte[1000], length).length);
        final ByteExchange.Contribution over = SerialForm.write(1, new byte[1000], length - 1);
        assertNull(over.bytes());
        assertNull(over.failure());
        assertEquals(length, over.length());
        assertEquals(length, over.lengthField(over.payload()), "the header says how long, and the check refuses it");
        assertEquals(0, over.payload().length);
        final ByteExchange.Contribution nothingFits = SerialForm.write(1, null, 0);
        assertNull(nothingFits.bytes());
        assertEquals(plainly(null).length, nothingFits.length());
    }

    @Test
    void aClassTheFilterRejectsIsNamedWithTheRankItCameFrom()
    {
        final byte[] bytes = written(new Holder(new Metrics(1, 2, "f")), 1000);
        final ObjectLimits limits = ObjectLimits.DEFAULT.withFilter(
            ObjectInputFilter.Config.createFilter("!" + Metrics.class.getName()));
        final HcclException ex = assertThrows(HcclException.class,
            () -> SerialForm.read(RANK_0, "allGatherObject(x)", 3, bytes, Holder.class, limits));
        assertEquals(ErrorCode.E_PARA, ex.errorCode());
        assertEquals(0, ex.rank());
        assertEquals(3, ex.peer());
        assertEquals("allGatherObject(x): the value from rank 3 does not deserialize: its class " +
            Metrics.class.getName() + " is rejected by ObjectLimits.filter: allow it there on every rank, or send " +
            "another", ex.detail());
        assertInstanceOf(InvalidClassException.class, ex.getCause());
        // Allowed by the filter, the same bytes read.
        assertEquals(new Holder(new Metrics(1, 2, "f")), SerialForm.read(RANK_0, "call", 3, bytes, Holder.class,
            ObjectLimits.DEFAULT.withFilter(ObjectInputFilter.Config.createFilter(Holder.class.getName() + ";" +
                Metrics.class.getName() + ";java.base/*;!*"))));
    }

    @Test
    void aValueNestedDeeperThanTheLimitIsRefused()
    {
        Link chain = null;
        for (int i = 0; i < 30; i++)
        {
            chain = new Link(chain);
        }
        final byte[] bytes = written(chain, 100_000);
        assertEquals(chain, SerialForm.read(RANK_0, "call", 1, bytes, Link.class, ObjectLimits.DEFAULT));
        final HcclException ex = assertThrows(HcclException.class, () -> SerialForm.read(RANK_0, "call", 1, bytes,
            Link.class, ObjectLimits.DEFAULT.withMaxDepth(10)));
        assertEquals("call: the value from rank 1 does not deserialize: it nests 11 objects deep, deeper than " +
            "maxDepth 10: pass a larger ObjectLimits.maxDepth on every rank, or send a flatter value", ex.detail());
    }

    @Test
    void anArrayLongerThanTheValueIsCorruptAndNeverAllocated()
    {
        // An array's length precedes its elements: claim two billion longs in a value of a few dozen bytes.
        final byte[] bytes = written(new long[3], 1000);
        final int at = bytes.length - 3 * Long.BYTES - Integer.BYTES;
        assertEquals(3, ByteBuffer.wrap(bytes, at, Integer.BYTES).getInt(), "where the length lies");
        ByteBuffer.wrap(bytes).putInt(at, 2_000_000_000);
        final HcclException ex = assertThrows(HcclException.class,
            () -> SerialForm.read(RANK_0, "call", 2, bytes, long[].class, ObjectLimits.DEFAULT));
        assertEquals("call: the value from rank 2 does not deserialize: it declares an array of 2000000000 " +
            "elements in " + bytes.length + " bytes, which no serialized value does: the bytes are corrupt",
            ex.detail());
    }

    @Test
    void aClassMissingHereIsNamed()
    {
        final byte[] bytes = patched(written(new Aaaaaaaa(1), 1000), "Aaaaaaaa", "Zzzzzzzz");
        final HcclException ex = assertThrows(HcclException.class,
            () -> SerialForm.read(RANK_0, "call", 1, bytes, Object.class, ObjectLimits.DEFAULT));
        assertEquals("call: the value from rank 1 does not deserialize: its class " +
            Aaaaaaaa.class.getName().replace("Aaaaaaaa", "Zzzzzzzz") + " is not on this rank's class path: give " +
            "every rank the same classes", ex.detail());
        assertInstanceOf(ClassNotFoundException.class, ex.getCause());
    }

    @Test
    void aClassOfAnotherVersionIsNamed()
    {
        final byte[] bytes = written(new Versioned(), 1000);
        // The serialVersionUID follows the class's name in its descriptor.
        final byte[] name = Versioned.class.getName().getBytes(StandardCharsets.UTF_8);
        final int uid = indexOf(bytes, name) + name.length;
        assertEquals(7L, ByteBuffer.wrap(bytes, uid, Long.BYTES).getLong(), "where the serialVersionUID lies");
        bytes[uid] ^= 1;
        final HcclException ex = assertThrows(HcclException.class,
            () -> SerialForm.read(RANK_0, "call", 1, bytes, Versioned.class, ObjectLimits.DEFAULT));
        assertTrue(ex.detail().startsWith("call: the value from rank 1 does not deserialize: its class " +
            Versioned.class.getName() + " differs from this rank's (java.io.InvalidClassException: "), ex.detail());
        assertTrue(ex.detail().endsWith("): give every rank the same version of it"), ex.detail());
        assertInstanceOf(InvalidClassException.class, ex.getCause());
    }

    @Test
    void corruptBytesAndAnotherTypeAreNamedWithTheRank()
    {
        final HcclException corrupt = assertThrows(HcclException.class, () -> SerialForm.read(RANK_0, "call", 3,
            "not a serialized value".getBytes(StandardCharsets.UTF_8), Object.class, ObjectLimits.DEFAULT));
        assertEquals(3, corrupt.peer());
        assertInstanceOf(StreamCorruptedException.class, corrupt.getCause());
        assertTrue(corrupt.detail().startsWith("call: the value from rank 3 does not deserialize: " +
            "java.io.StreamCorruptedException: "), corrupt.detail());

        final HcclException other = assertThrows(HcclException.class, () -> SerialForm.read(RANK_0, "call", 2,
            written("a string", 100), Metrics.class, ObjectLimits.DEFAULT));
        assertEquals("call: the value from rank 2 does not deserialize: it is a java.lang.String, not a " +
            Metrics.class.getName() + ": pass a " + Metrics.class.getName() + " on every rank, or " +
            "java.lang.Object.class here", other.detail());
    }

    @Test
    void limitsAreChecked()
    {
        assertThrows(IllegalArgumentException.class, () -> ObjectLimits.DEFAULT.withMaxBytes(-1));
        assertThrows(IllegalArgumentException.class, () -> ObjectLimits.DEFAULT.withMaxBytes(Integer.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> ObjectLimits.DEFAULT.withMaxDepth(0));
        assertEquals(ObjectLimits.LARGEST, ObjectLimits.DEFAULT.withMaxBytes(ObjectLimits.LARGEST).maxBytes());
    }

    private static byte[] written(final Object value, final int maxBytes)
    {
        final ByteExchange.Contribution c = SerialForm.write(0, value, maxBytes);
        assertNull(c.failure(), c.failure());
        assertArrayEquals(plainly(value), c.bytes(), "the same bytes as an ObjectOutputStream's");
        return c.bytes();
    }

    private static byte[] plainly(final Object value)
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ObjectOutputStream objects = new ObjectOutputStream(out))
        {
            objects.writeObject(value);
        }
        catch (final IOException ex)
        {
            throw new AssertionError(ex);
        }
        return out.toByteArray();
    }

    private static byte[] patched(final byte[] bytes, final String from, final String to)
    {
        final byte[] f = from.getBytes(StandardCharsets.UTF_8);
        final byte[] t = to.getBytes(StandardCharsets.UTF_8);
        final int at = indexOf(bytes, f);
        System.arraycopy(t, 0, bytes, at, t.length);
        return bytes;
    }

    private static int indexOf(final byte[] bytes, final byte[] part)
    {
        outer:
        for (int i = 0; i + part.length <= bytes.length; i++)
        {
            for (int j = 0; j < part.length; j++)
            {
                if (bytes[i + j] != part[j])
                {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("not found");
    }
}
