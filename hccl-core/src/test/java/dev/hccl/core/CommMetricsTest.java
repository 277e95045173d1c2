package dev.hccl.core;

import dev.hccl.api.CommConfig;
import dev.hccl.api.CommMetrics;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.OperationMetrics;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.SizeClassMetrics;
import dev.hccl.core.jmx.CommunicatorBean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The always-on counters ({@link Communicator#metrics()}) and their MBean: after a known set of operations every
 * counter holds exactly what they did (calls, sizes as nccl-tests counts them, size classes, the histogram, the
 * latest call), the MBean in the platform server says the same, a failed call and the failure are counted, and the
 * MBean is gone once the communicator is closed. Ranks as threads.
 */
@Timeout(120)
class CommMetricsTest
{
    private static final int COUNT = 1000;

    @Test
    void countersAndTheirMBeanHoldWhatTheOperationsDid() throws Exception
    {
        final List<Communicator> comms = Hccl.initAll(2, CommConfig.builder().environment(Map.of()).worldSize(2)
            .set(CommConfig.JMX, true).conclude());
        final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        final List<ObjectName> names = new ArrayList<>();
        try
        {
            onEach(comms, comm ->
            {
                final ByteBuffer data = ByteBuffer.allocateDirect(COUNT * 8).order(ByteOrder.nativeOrder());
                for (int i = 0; i < 3; i++)
                {
                    comm.allReduce(data, data, COUNT, DataType.FP32, ReduceOp.SUM);
                }
                comm.allGather(ByteBuffer.allocateDirect(400).order(ByteOrder.nativeOrder()), data, 100, DataType.FP32);
                if (comm.rank() == 0)
                {
                    comm.send(data, 100, DataType.INT32, 1);
                }
                else
                {
                    comm.recv(data, 100, DataType.INT32, 0);
                }
            });
            for (final Communicator comm : comms)
            {
                final int r = comm.rank();
                final CommMetrics m = comm.metrics();
                assertEquals(r, m.rank());
                assertEquals(2, m.worldSize());
                assertEquals(5, m.calls(), m.toString());
                assertEquals(0, m.failedCalls());
                assertNull(m.failure());

                final OperationMetrics allReduce = m.of(Operation.ALL_REDUCE);
                assertEquals(3, allReduce.count());
                assertEquals(3L * COUNT * 4, allReduce.bytes());
                assertEquals(COUNT * 4L, allReduce.lastBytes());
                assertTrue(allReduce.totalNanos() > 0 && allReduce.lastNanos() > 0, allReduce.toString());
                assertTrue(allReduce.peerWaitNanos() <= allReduce.totalNanos(), allReduce.toString());
                assertEquals(List.of(new SizeClassMetrics(2048, 4095, 3, allReduce.totalNanos())),
                    allReduce.sizeClasses());
                long inHistogram = 0;
                for (final long n : allReduce.latencyBuckets())
                {
                    inHistogram += n;
                }
                assertEquals(3, inHistogram);
                assertTrue(allReduce.latencyAtMostNanos(1.0) >= allReduce.meanNanos(), allReduce.toString());
                assertTrue(allReduce.lastBusBandwidth() > 0);

                // All-gather: nccl-tests' size, the whole output.
                assertEquals(100 * 4 * 2, m.of(Operation.ALL_GATHER).bytes());
                final OperationMetrics p2p = m.of(r == 0 ? Operation.SEND : Operation.RECV);
                assertEquals(1, p2p.count());
                assertEquals(400, p2p.bytes());
                assertEquals(0, m.of(r == 0 ? Operation.RECV : Operation.SEND).count());

                final ObjectName name = CommunicatorBean.name(Long.parseLong(m.communicatorId(), 16), r);
                names.add(name);
                assertEquals(5L, server.getAttribute(name, "Calls"));
                assertEquals(m.communicatorId(), server.getAttribute(name, "CommunicatorId"));
                assertEquals(3L, valueOf((TabularData)server.getAttribute(name, "CallsByOperation"), "allReduce"));
                assertEquals(3L, valueOf((TabularData)server.getAttribute(name, "CallsBySizeClass"),
                    "allReduce 2048-4095 B"));
                assertEquals("", server.getAttribute(name, "Failure"));
            }

            // A call whose count differs between the ranks fails: it counts, and so does the failure.
            onEach(comms, comm ->
            {
                final ByteBuffer data = ByteBuffer.allocateDirect(COUNT * 4).order(ByteOrder.nativeOrder());
                assertThrows(HcclException.class,
                    () -> comm.allReduce(data, data, COUNT - comm.rank(), DataType.FP32, ReduceOp.SUM));
            });
            for (final Communicator comm : comms)
            {
                final CommMetrics m = comm.metrics();
                assertEquals(4, m.of(Operation.ALL_REDUCE).count());
                assertEquals(1, m.failedCalls());
                assertNotNull(m.failure());
                final String failure = (String)server.getAttribute(names.get(comm.rank()), "Failure");
                assertTrue(failure.contains("allReduce"), failure);
            }
        }
        finally
        {
            for (final Communicator comm : comms)
            {
                try
                {
                    comm.close();
                }
                catch (final HcclException expected)
                {
                    // close() reports the failure again
                }
            }
        }
        for (final ObjectName name : names)
        {
            assertFalse(server.isRegistered(name), name + " is still registered after close()");
        }
    }

    @Test
    void withoutTheSettingNoMBeanIsRegistered() throws Exception
    {
        final List<Communicator> comms = Hccl.initAll(2, CommConfig.builder().environment(Map.of()).worldSize(2)
            .conclude());
        try
        {
            final CommMetrics m = comms.get(0).metrics();
            assertTrue(ManagementFactory.getPlatformMBeanServer().queryNames(
                new ObjectName("dev.hccl:type=Communicator,id=" + m.communicatorId() + ",*"), null).isEmpty());
        }
        finally
        {
            comms.forEach(Communicator::close);
        }
    }

    private static Object valueOf(final TabularData table, final String key)
    {
        final CompositeData row = table.get(new Object[] {key});
        assertNotNull(row, key + " not in " + table);
        return row.get("value");
    }

    private static void onEach(final List<Communicator> comms, final Consumer<Communicator> task) throws Exception
    {
        final ExecutorService pool = Executors.newFixedThreadPool(comms.size());
        try
        {
            final List<Future<?>> futures = new ArrayList<>();
            for (final Communicator comm : comms)
            {
                futures.add(pool.submit(() -> task.accept(comm)));
            }
            for (final Future<?> f : futures)
            {
                f.get(60, TimeUnit.SECONDS);
            }
        }
        finally
        {
            pool.shutdownNow();
        }
    }
}
