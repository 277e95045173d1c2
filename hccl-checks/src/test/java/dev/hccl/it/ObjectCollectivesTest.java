package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.ObjectLimits;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.NotSerializableException;
import java.io.ObjectInputFilter;
import java.io.ObjectInputStream;
import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The object collectives ({@code allGatherBytes}, {@code broadcastBytes}, {@code allGatherObject},
 * {@code broadcastObject}) between ranks as threads: values round-trip, and every failure that one rank's value causes
 * (over the limit, not serializable, null) fails every rank with the same message naming that rank, leaving the
 * communicators in step, so that the next call works; a value that does not deserialize names the rank it came from.
 */
@Timeout(120)
class ObjectCollectivesTest
{
    /** What a rank reports after a step of training. */
    record Metrics(int rank, double loss, String file) implements Serializable
    {
    }

    /** Holds anything, so that a value can hold what does not serialize. */
    record Holder(Object inside) implements Serializable
    {
    }

    /** A class the tests' filter rejects. */
    record Secret(String text) implements Serializable
    {
    }

    /** Serializes, but cannot be read back. */
    static final class Unreadable implements Serializable
    {
        private static final long serialVersionUID = 1L;

        private void readObject(final ObjectInputStream in) throws IOException, ClassNotFoundException
        {
            in.defaultReadObject();
            throw new IllegalStateException("Unreadable cannot be read");
        }
    }

    private static List<Communicator> open(final int n)
    {
        return Hccl.initAll(n, CommConfig.builder().environment(Map.of()).worldSize(n)
            .execTimeout(Duration.ofSeconds(60)).conclude());
    }

    /** Rank {@code r}'s bytes: {@code 5 r} of them, so rank 0's are empty. */
    private static byte[] bytesOf(final int r)
    {
        final byte[] b = new byte[5 * r];
        for (int i = 0; i < b.length; i++)
        {
            b[i] = (byte)(31 * r + i);
        }
        return b;
    }

    /** Each rank's result of {@code call}, or the {@link HcclException} it threw. */
    private static List<Object> outcomes(final List<Communicator> comms, final Function<Communicator, Object> call)
        throws Exception
    {
        return Ranks.onEach(comms, 60, c ->
        {
            try
            {
                return call.apply(c);
            }
            catch (final HcclException ex)
            {
                return ex;
            }
        });
    }

    /** Asserts that every rank failed with {@code code}, the same detail, and {@code peer} as the rank at fault. */
    private static List<HcclException> assertEveryRankFailed(
        final List<Object> outcomes, final ErrorCode code, final int peer, final String detail)
    {
        final List<HcclException> failures = new ArrayList<>();
        for (int r = 0; r < outcomes.size(); r++)
        {
            final HcclException ex = assertInstanceOf(HcclException.class, outcomes.get(r), "rank " + r);
            assertEquals(code, ex.errorCode(), ex.getMessage());
            assertEquals(r, ex.rank(), ex.getMessage());
            assertEquals(peer, ex.peer(), ex.getMessage());
            assertEquals(detail, ex.detail(), "rank " + r);
            failures.add(ex);
        }
        return failures;
    }

    /** After a failure, the ranks are still in step: a gather works on every rank. */
    private static void assertStillInStep(final List<Communicator> comms) throws Exception
    {
        for (final Object result : outcomes(comms, c -> c.allGatherBytes(bytesOf(c.rank()))))
        {
            final byte[][] all = (byte[][])result;
            for (int r = 0; r < comms.size(); r++)
            {
                assertArrayEquals(bytesOf(r), all[r]);
            }
        }
    }

    @ParameterizedTest(name = "worldSize={0}")
    @ValueSource(ints = {1, 2, 3})
    void gathersAndBroadcastsBytesOfAnyLength(final int n) throws Exception
    {
        final List<Communicator> comms = open(n);
        try
        {
            final List<byte[][]> gathered = Ranks.onEach(comms, 60, c -> c.allGatherBytes(bytesOf(c.rank())));
            final List<byte[][]> empty = Ranks.onEach(comms, 60, c -> c.allGatherBytes(new byte[0]));
            final List<byte[]> broadcast = Ranks.onEach(comms, 60,
                c -> c.broadcastBytes(c.rank() == n - 1 ? bytesOf(n) : null, n - 1));
            for (int rank = 0; rank < n; rank++)
            {
                assertEquals(n, gathered.get(rank).length);
                assertEquals(n, empty.get(rank).length);
                for (int r = 0; r < n; r++)
                {
                    assertArrayEquals(bytesOf(r), gathered.get(rank)[r], "rank " + rank + " holds rank " + r + "'s");
                    assertArrayEquals(new byte[0], empty.get(rank)[r]);
                }
                assertArrayEquals(bytesOf(n), broadcast.get(rank), "rank " + rank);
            }
            if (n > 1)
            {
                assertNotSame(broadcast.get(0), broadcast.get(n - 1), "every rank gets a fresh array");
            }
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    @Test
    void metricsFileNamesAndConfigsRoundTrip() throws Exception
    {
        final List<Communicator> comms = open(3);
        try
        {
            final List<List<Metrics>> metrics = Ranks.onEach(comms, 60,
                c -> c.allGatherObject(new Metrics(c.rank(), 0.5 * c.rank(), "part-" + c.rank() + ".parquet"),
                    Metrics.class));
            final List<List<String>> files = Ranks.onEach(comms, 60,
                c -> c.allGatherObject(c.rank() == 1 ? null : "/data/shard-" + c.rank(), String.class));
            final Map<String, Object> config = new HashMap<>();
            config.put("lr", 0.001);
            config.put("epochs", 90);
            config.put("files", new ArrayList<>(List.of("train.tfrecord", "valid.tfrecord")));
            @SuppressWarnings("unchecked")
            final List<Map<String, Object>> configs = Ranks.onEach(comms, 60,
                c -> (Map<String, Object>)c.broadcastObject(c.rank() == 2 ? config : null, Map.class, 2));
            for (int rank = 0; rank < 3; rank++)
            {
                assertEquals(List.of(new Metrics(0, 0, "part-0.parquet"), new Metrics(1, 0.5, "part-1.parquet"),
                    new Metrics(2, 1, "part-2.parquet")), metrics.get(rank));
                assertEquals(Arrays.asList("/data/shard-0", null, "/data/shard-2"), files.get(rank));
                assertEquals(config, configs.get(rank));
                assertNotSame(config, configs.get(rank), "the root too gets a copy, as every rank does");
            }
            assertThrows(UnsupportedOperationException.class, () -> metrics.get(0).add(null));
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    @Test
    void aValueOverTheLimitFailsEveryRankAlike() throws Exception
    {
        final List<Communicator> comms = open(3);
        try
        {
            assertEveryRankFailed(outcomes(comms, c -> c.allGatherBytes(new byte[c.rank() == 1 ? 2000 : 10], 1000)),
                ErrorCode.E_PARA, 1, "allGatherBytes: rank 1's value is 2000 bytes, over the limit of 1000 bytes: " +
                    "pass a larger maxBytes on every rank, or send less");
            assertStillInStep(comms);

            // Over this rank's own limit, the value is measured, not kept: the same check refuses it everywhere.
            final ObjectLimits small = ObjectLimits.DEFAULT.withMaxBytes(1000);
            final List<HcclException> failures = assertEveryRankFailed(
                outcomes(comms, c -> c.allGatherObject(new byte[c.rank() == 2 ? 5000 : 1], byte[].class, small)),
                ErrorCode.E_PARA, 2, "allGatherObject([B): rank 2's value is 5027 bytes, over the limit of 1000 " +
                    "bytes: pass a larger maxBytes on every rank, or send less");
            assertTrue(failures.get(0).getMessage().startsWith("E_PARA rank 0: allGatherObject"),
                failures.get(0).getMessage());
            assertStillInStep(comms);

            assertEveryRankFailed(outcomes(comms, c -> c.broadcastObject(c.rank() == 1 ? "x".repeat(2000) : null,
                String.class, 1, small)), ErrorCode.E_PARA, 1, "broadcastObject(java.lang.String): rank 1's " +
                "value is 2007 bytes, over the limit of 1000 bytes: pass a larger maxBytes on every rank, or send " +
                "less");
            assertStillInStep(comms);
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    @Test
    void theSmallestLimitAnyRankPassedApplies() throws Exception
    {
        final List<Communicator> comms = open(3);
        try
        {
            // Rank 2's value is within its own limit, but not within rank 0's: without rank 0's limit in the
            // header, rank 2 and rank 1 would wait for a payload that rank 0 refuses.
            assertEveryRankFailed(outcomes(comms, c -> c.broadcastBytes(new byte[500], 2, c.rank() == 0 ? 100 :
                10_000)), ErrorCode.E_PARA, 2, "broadcastBytes: rank 2's value is 500 bytes, over the limit " +
                "of 100 bytes (rank 0's, the smallest the ranks passed): pass a larger maxBytes on every rank, or " +
                "send less");
            assertStillInStep(comms);
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    @Test
    void aValueThatDoesNotSerializeFailsEveryRankNamingItsRankAndClass() throws Exception
    {
        final List<Communicator> comms = open(3);
        try
        {
            final List<HcclException> failures = assertEveryRankFailed(outcomes(comms,
                c -> c.allGatherObject(new Holder(c.rank() == 1 ? new Object() : "fine"), Holder.class)),
                ErrorCode.E_PARA, 1, "allGatherObject(" + Holder.class.getName() + "): rank 1's value, a " +
                    Holder.class.getName() + ", does not serialize: java.io.NotSerializableException: " +
                    "java.lang.Object: make that class Serializable, or its field transient");
            assertInstanceOf(NotSerializableException.class, failures.get(1).getCause(), "the rank's own cause");
            assertNull(failures.get(0).getCause());
            assertStillInStep(comms);

            assertEveryRankFailed(outcomes(comms, c -> c.allGatherObject(c.rank() == 0 ? new Object() : 1,
                Object.class)), ErrorCode.E_PARA, 0, "allGatherObject(java.lang.Object): rank 0's value, a " +
                "java.lang.Object, does not serialize: java.io.NotSerializableException: java.lang.Object: make " +
                "that class Serializable, or its field transient");
            assertStillInStep(comms);

            assertEveryRankFailed(outcomes(comms, c -> c.broadcastObject(new Holder(new Object()), Holder.class, 2)),
                ErrorCode.E_PARA, 2, "broadcastObject(" + Holder.class.getName() + "): rank 2's value, a " +
                    Holder.class.getName() + ", does not serialize: java.io.NotSerializableException: " +
                    "java.lang.Object: make that class Serializable, or its field transient");
            assertStillInStep(comms);

            // Two ranks pass null: the first is named, the other counted.
            assertEveryRankFailed(outcomes(comms, c -> c.allGatherBytes(c.rank() == 0 ? new byte[1] : null)),
                ErrorCode.E_PARA, 1, "allGatherBytes: rank 1 passed null as mine: pass an empty array for no bytes; " +
                    "ranks [2] failed too");
            assertStillInStep(comms);
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    @Test
    void aValueThatDoesNotDeserializeNamesTheRankItCameFrom() throws Exception
    {
        final List<Communicator> comms = open(3);
        try
        {
            final List<HcclException> unreadable = assertEveryRankFailed(outcomes(comms,
                c -> c.allGatherObject(c.rank() == 2 ? new Unreadable() : "fine", Serializable.class)),
                ErrorCode.E_PARA, 2, "allGatherObject(java.io.Serializable): the value from rank 2 does not " +
                    "deserialize: java.lang.IllegalStateException: Unreadable cannot be read");
            assertInstanceOf(IllegalStateException.class, unreadable.get(0).getCause());
            assertStillInStep(comms);

            final ObjectLimits noSecrets = ObjectLimits.DEFAULT.withFilter(
                ObjectInputFilter.Config.createFilter("!" + Secret.class.getName()));
            assertEveryRankFailed(outcomes(comms, c -> c.broadcastObject(c.rank() == 1 ? new Holder(new Secret("pw"))
                : null, Holder.class, 1, noSecrets)), ErrorCode.E_PARA, 1, "broadcastObject(" +
                Holder.class.getName() + "): the value from rank 1 does not deserialize: its class " +
                Secret.class.getName() + " is rejected by ObjectLimits.filter: allow it there on every rank, or send " +
                "another");
            assertStillInStep(comms);
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    @Test
    void ranksPassingDifferentRootsFailAlike() throws Exception
    {
        final List<Communicator> comms = open(3);
        try
        {
            assertEveryRankFailed(outcomes(comms, c -> c.broadcastBytes(new byte[3], c.rank() == 2 ? 1 : 0)),
                ErrorCode.E_MISMATCH, 2, "broadcastBytes: the ranks passed different roots: rank 0 passed " +
                    "0, rank 2 passed 1: pass the same root on every rank");
            assertStillInStep(comms);
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    @Test
    void argumentsWrongOnTheCallingRankAreRefusedBeforeAnythingIsSent() throws Exception
    {
        final List<Communicator> comms = open(2);
        try
        {
            final Communicator c = comms.get(1);
            assertEquals("broadcastBytes on rank 1: root is 2, but the ranks are 0 to 1: pass one of them",
                assertThrows(IllegalArgumentException.class, () -> c.broadcastBytes(null, 2)).getMessage());
            assertEquals("allGatherBytes on rank 1: maxBytes is -1: pass 0 to 2147483639 (the longest byte[] a JVM " +
                "allocates)", assertThrows(IllegalArgumentException.class,
                () -> c.allGatherBytes(new byte[0], -1)).getMessage());
            assertEquals("allGatherObject(null) on rank 1: type must not be null: pass the values' class, " +
                "Object.class for any", assertThrows(IllegalArgumentException.class,
                () -> c.allGatherObject("x", null)).getMessage());
            assertThrows(IllegalArgumentException.class, () -> c.broadcastObject(1, int.class, 0));
            assertThrows(IllegalArgumentException.class, () -> c.allGatherObject(1, Integer.class, null));
            assertStillInStep(comms);
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }
}
