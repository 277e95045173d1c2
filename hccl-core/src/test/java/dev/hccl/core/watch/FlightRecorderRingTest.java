package dev.hccl.core.watch;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The flight recorder's ring keeps the last {@code HCCL_TRACE_BUFFER_SIZE} operations and dumps them oldest first:
 * before it fills, once it has wrapped, and when the count is a multiple of its size.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FlightRecorderRingTest
{
    private static final Pattern COUNT = Pattern.compile("\"count\":(\\d+)");

    @TempDir
    Path tmp;

    @Test
    void theRingDumpsTheLastOperationsOldestFirst() throws Exception
    {
        final List<Communicator> comms = Hccl.initAll(2, CommConfig.builder().environment(Map.of()).worldSize(2)
            .set(CommConfig.TRACE_BUFFER_SIZE, 3).set(CommConfig.DUMP_DIR, tmp.toString()).conclude());
        final ExecutorService ranks = Executors.newFixedThreadPool(2);
        try
        {
            allReduces(comms, ranks, 1, 2);
            assertEquals(List.of(1L, 2L), countsDumped(comms.get(0)), "before the ring fills");
            allReduces(comms, ranks, 3, 5);
            assertEquals(List.of(3L, 4L, 5L), countsDumped(comms.get(0)), "once it has wrapped");
            allReduces(comms, ranks, 6, 6);
            assertEquals(List.of(4L, 5L, 6L), countsDumped(comms.get(1)), "at a multiple of its size");
        }
        finally
        {
            ranks.shutdownNow();
            comms.forEach(Communicator::close);
        }
    }

    /** An all-reduce of each count from {@code first} to {@code last} on every rank: the count names it. */
    private static void allReduces(final List<Communicator> comms, final ExecutorService ranks, final int first,
        final int last) throws Exception
    {
        final List<Future<?>> done = new ArrayList<>();
        for (final Communicator comm : comms)
        {
            done.add(ranks.submit(() ->
            {
                final ByteBuffer data = ByteBuffer.allocateDirect(4 * last).order(ByteOrder.nativeOrder());
                for (int count = first; count <= last; count++)
                {
                    comm.allReduce(data, data, count, DataType.FP32, ReduceOp.SUM);
                }
                return null;
            }));
        }
        for (final Future<?> f : done)
        {
            f.get();
        }
    }

    private static List<Long> countsDumped(final Communicator comm) throws Exception
    {
        final String json = Files.readString(comm.dumpTrace());
        final Matcher m = COUNT.matcher(json.substring(json.indexOf("\"entries\"")));
        final List<Long> counts = new ArrayList<>();
        while (m.find())
        {
            counts.add(Long.parseLong(m.group(1)));
        }
        return counts;
    }
}
