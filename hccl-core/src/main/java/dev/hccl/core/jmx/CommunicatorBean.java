package dev.hccl.core.jmx;

import dev.hccl.api.CommMetrics;
import dev.hccl.api.OperationMetrics;
import dev.hccl.api.SizeClassMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The MXBean of one rank of a communicator: every attribute reads the communicator's counters when asked, so a
 * registered bean costs the communicator nothing.
 */
public final class CommunicatorBean implements CommunicatorMXBean
{
    private static final Logger LOG = LoggerFactory.getLogger(CommunicatorBean.class);

    private final Supplier<CommMetrics> metrics;

    private CommunicatorBean(final Supplier<CommMetrics> metrics)
    {
        this.metrics = metrics;
    }

    /**
     * Registers a communicator's bean in the platform MBean server.
     *
     * @param commId  the communicator's id.
     * @param rank    this rank.
     * @param metrics its counters, read when an attribute is.
     * @return what unregisters it, once however often it runs; it does nothing when registration failed (which is
     *         logged at DEBUG: JMX is an aid, never a reason for a communicator to fail).
     */
    public static Runnable register(final long commId, final int rank, final Supplier<CommMetrics> metrics)
    {
        try
        {
            final ObjectName name = name(commId, rank);
            final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            server.registerMBean(new CommunicatorBean(metrics), name);
            final AtomicBoolean registered = new AtomicBoolean(true);
            return () ->
            {
                if (registered.getAndSet(false))
                {
                    unregister(server, name);
                }
            };
        }
        catch (final JMException | RuntimeException ex)
        {
            LOG.debug("rank {}: communicator {} has no MBean: {}", rank, Long.toHexString(commId), ex.toString());
            return () ->
            {
            };
        }
    }

    /**
     * @param commId the communicator's id.
     * @param rank   the rank.
     * @return the bean's name: {@code dev.hccl:type=Communicator,id=<id in hex>,rank=<rank>}.
     * @throws JMException never, for these values.
     */
    public static ObjectName name(final long commId, final int rank) throws JMException
    {
        return new ObjectName("dev.hccl:type=Communicator,id=" + Long.toHexString(commId) + ",rank=" + rank);
    }

    private static void unregister(final MBeanServer server, final ObjectName name)
    {
        try
        {
            server.unregisterMBean(name);
        }
        catch (final JMException ex)
        {
            LOG.debug("could not unregister {}: {}", name, ex.toString());
        }
    }

    @Override
    public String getCommunicatorId()
    {
        return metrics.get().communicatorId();
    }

    @Override
    public int getRank()
    {
        return metrics.get().rank();
    }

    @Override
    public int getWorldSize()
    {
        return metrics.get().worldSize();
    }

    @Override
    public long getCalls()
    {
        return metrics.get().calls();
    }

    @Override
    public long getFailedCalls()
    {
        return metrics.get().failedCalls();
    }

    @Override
    public long getBytes()
    {
        return metrics.get().bytes();
    }

    @Override
    public long getStalls()
    {
        return metrics.get().stalls();
    }

    @Override
    public String getFailure()
    {
        final CommMetrics m = metrics.get();
        return m.failure() == null ? "" : m.failure().getMessage();
    }

    @Override
    public Map<String, Long> getCallsByOperation()
    {
        return byOperation(OperationMetrics::count);
    }

    @Override
    public Map<String, Long> getBytesByOperation()
    {
        return byOperation(OperationMetrics::bytes);
    }

    @Override
    public Map<String, Double> getMeanMicrosByOperation()
    {
        return byOperation(m -> m.meanNanos() / 1e3);
    }

    @Override
    public Map<String, Double> getMeanPeerWaitMicrosByOperation()
    {
        return byOperation(m -> m.count() == 0 ? 0 : m.peerWaitNanos() / 1e3 / m.count());
    }

    @Override
    public Map<String, Double> getMedianMicrosAtMostByOperation()
    {
        return byOperation(m -> m.latencyAtMostNanos(0.5) / 1e3);
    }

    @Override
    public Map<String, Double> getP99MicrosAtMostByOperation()
    {
        return byOperation(m -> m.latencyAtMostNanos(0.99) / 1e3);
    }

    @Override
    public Map<String, Double> getLastBusBandwidthByOperation()
    {
        return byOperation(OperationMetrics::lastBusBandwidth);
    }

    @Override
    public Map<String, Long> getCallsBySizeClass()
    {
        return bySizeClass(SizeClassMetrics::count);
    }

    @Override
    public Map<String, Double> getMeanMicrosBySizeClass()
    {
        return bySizeClass(c -> c.meanNanos() / 1e3);
    }

    private <T> Map<String, T> byOperation(final Function<OperationMetrics, T> value)
    {
        final Map<String, T> map = new LinkedHashMap<>();
        for (final OperationMetrics m : metrics.get().operations())
        {
            map.put(m.operation().displayName(), value.apply(m));
        }
        return map;
    }

    private <T> Map<String, T> bySizeClass(final Function<SizeClassMetrics, T> value)
    {
        final Map<String, T> map = new LinkedHashMap<>();
        for (final OperationMetrics m : metrics.get().operations())
        {
            for (final SizeClassMetrics c : m.sizeClasses())
            {
                map.put(m.operation().displayName() + " " + c.minBytes() + "-" + c.maxBytes() + " B",
                    value.apply(c));
            }
        }
        return map;
    }
}
