package dev.hccl.bench.check;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The checker itself: it passes a right library and names what a wrong one did (a result element, a send buffer it
 * wrote), alone and with the ranks sharing the expected results. Ranks are threads over the in-JVM transport; a wrong
 * library is a right one whose all-reduce then damages a buffer.
 */
@Timeout(120)
class CollectiveCheckTest
{
    private static final int RANKS = 3;
    private static final int COUNT = 1000;
    private static final List<CheckCase> ALL_REDUCES = List.of(
        new CheckCase(Operation.ALL_REDUCE, DataType.FP32, ReduceOp.SUM, COUNT, false, 0),
        new CheckCase(Operation.ALL_REDUCE, DataType.FP16, ReduceOp.AVG, COUNT, false, 0),
        new CheckCase(Operation.ALL_REDUCE, DataType.INT8, ReduceOp.PROD, COUNT, true, 0),
        new CheckCase(Operation.ALL_REDUCE, DataType.FP8_E4M3, ReduceOp.MAX, COUNT, false, 0));

    @Test
    void aRightLibraryPassesAloneAndSharingTheReference() throws Exception
    {
        final SharedReference shared = new SharedReference(RANKS);
        for (final SharedReference reference : new SharedReference[]{null, shared})
        {
            final List<String> verdicts = onEveryRank(null, comm ->
            {
                final List<String> wrong = new ArrayList<>();
                long seed = 7;
                for (final CheckCase c : ALL_REDUCES)
                {
                    final String verdict = CollectiveCheck.run(comm, c, seed++, reference);
                    if (verdict != null)
                    {
                        wrong.add(verdict);
                    }
                }
                return wrong.isEmpty() ? null : wrong.toString();
            });
            verdicts.forEach(v -> assertNull(v, "sharing " + (reference != null)));
        }
        assertEquals(0, shared.held(), "tables left after every rank took its own");
    }

    @Test
    void aWrongResultElementIsNamedAloneAndSharingTheReference() throws Exception
    {
        final CheckCase c = ALL_REDUCES.get(0);
        for (final SharedReference reference : new SharedReference[]{null, new SharedReference(RANKS)})
        {
            final List<String> verdicts = onEveryRank((send, recv) -> recv.putFloat(5 * 4, 12345.5f),
                comm -> CollectiveCheck.run(comm, c, 11, reference));
            for (int r = 0; r < RANKS; r++)
            {
                assertEquals("rank " + r + " " + c + ": 1 wrong element(s): [5] expected " +
                    Reference.show(DataType.FP32, Reference.reduced(11, RANKS, 5, DataType.FP32, ReduceOp.SUM)) +
                    " got 12345.5;", verdicts.get(r));
            }
        }
    }

    @Test
    void aSendBufferTheOperationWroteIsNamed() throws Exception
    {
        final CheckCase c = ALL_REDUCES.get(0);
        final int at = 4 * 700 + 2;
        final List<String> verdicts = onEveryRank((send, recv) -> send.put(at, (byte)(send.get(at) ^ 1)),
            comm -> CollectiveCheck.run(comm, c, 3));
        for (int r = 0; r < RANKS; r++)
        {
            assertEquals("rank " + r + " " + c + ": the send buffer changed at element 700", verdicts.get(r));
        }
    }

    /**
     * Runs {@code body} on every rank's thread, each with its communicator, whose out-of-place all-reduce ends with
     * {@code damage} to its buffers when it is given.
     */
    private static List<String> onEveryRank(final BiConsumer<ByteBuffer, ByteBuffer> damage,
        final Function<Communicator, String> body) throws Exception
    {
        final List<Communicator> comms = Hccl.initAll(RANKS, CommConfig.builder().environment(Map.of())
            .worldSize(RANKS).conclude());
        try
        {
            final List<CompletableFuture<String>> futures = new ArrayList<>();
            for (final Communicator comm : comms)
            {
                final Communicator used = damage == null ? comm : damaging(comm, damage);
                futures.add(CompletableFuture.supplyAsync(() -> body.apply(used), r -> new Thread(r).start()));
            }
            final List<String> verdicts = new ArrayList<>();
            for (final CompletableFuture<String> f : futures)
            {
                verdicts.add(f.get(60, TimeUnit.SECONDS));
            }
            return verdicts;
        }
        finally
        {
            for (final Communicator comm : comms)
            {
                comm.close();
            }
        }
    }

    private static Communicator damaging(final Communicator comm, final BiConsumer<ByteBuffer, ByteBuffer> damage)
    {
        return (Communicator)Proxy.newProxyInstance(Communicator.class.getClassLoader(),
            new Class<?>[]{Communicator.class}, (proxy, method, args) ->
            {
                try
                {
                    final Object result = method.invoke(comm, args);
                    if (method.getName().equals("allReduce") && args.length == 5 && args[0] instanceof ByteBuffer)
                    {
                        damage.accept((ByteBuffer)args[0], (ByteBuffer)args[1]);
                    }
                    return result;
                }
                catch (final InvocationTargetException e)
                {
                    throw e.getCause();
                }
            });
    }
}
