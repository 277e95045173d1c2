package dev.hccl.micrometer;

import dev.hccl.api.CommMetrics;
import dev.hccl.api.Communicator;
import dev.hccl.api.Operation;
import dev.hccl.api.OperationMetrics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;

import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * Binds one communicator's counters to a Micrometer registry, as Micrometer's own binders do for the JVM:
 * {@code new HcclMeters(comm).bindTo(registry)}. Meters are functions of {@link Communicator#metrics()}, read when the
 * registry publishes (a scrape, a step), so they cost the communicator nothing between; each is tagged with the
 * communicator's id and this rank, and the operation's name where it is per operation.
 * <ul>
 *     <li>{@code hccl.operation} (function timer): calls and their total time, per operation;</li>
 *     <li>{@code hccl.operation.failed} (counter): calls that failed;</li>
 *     <li>{@code hccl.operation.bytes} (counter, bytes): sizes as nccl-tests counts them;</li>
 *     <li>{@code hccl.operation.peer.wait} (counter, seconds): time spent waiting for other ranks;</li>
 *     <li>{@code hccl.operation.bus.bandwidth} (gauge, GB/s): the latest call's bus bandwidth;</li>
 *     <li>{@code hccl.stalls} (counter): waits reported as stalled; {@code hccl.failed} (gauge): 1 once the
 *     communicator failed.</li>
 * </ul>
 * Per-operation meters exist for the collectives, send and receive, whether or not they have been called.
 */
public final class HcclMeters implements MeterBinder
{
    /** The operations that get meters: every collective, send and receive (not init or split). */
    static final Set<Operation> METERED = EnumSet.complementOf(EnumSet.of(Operation.INIT, Operation.SPLIT));

    private final Communicator comm;
    private final Tags tags;

    /**
     * @param comm the communicator; its id and rank tag every meter.
     */
    public HcclMeters(final Communicator comm)
    {
        this(comm, Tags.empty());
    }

    /**
     * @param comm the communicator.
     * @param tags more tags for every meter (the job's name, say).
     */
    public HcclMeters(final Communicator comm, final Iterable<io.micrometer.core.instrument.Tag> tags)
    {
        this.comm = comm;
        final CommMetrics now = comm.metrics();
        this.tags = Tags.of(tags).and("communicator", now.communicatorId(), "rank", Integer.toString(now.rank()));
    }

    @Override
    public void bindTo(final MeterRegistry registry)
    {
        for (final Operation op : METERED)
        {
            final Tags opTags = tags.and("operation", op.displayName());
            FunctionTimer.builder("hccl.operation", comm, c -> of(c, op).count(), c -> of(c, op).totalNanos(),
                TimeUnit.NANOSECONDS).tags(opTags).description("hccl-java calls completed and their time")
                .register(registry);
            counter(registry, "hccl.operation.failed", opTags, null, "calls that failed", c -> of(c, op).failed());
            counter(registry, "hccl.operation.bytes", opTags, "bytes", "bytes moved, as nccl-tests counts sizes",
                c -> of(c, op).bytes());
            counter(registry, "hccl.operation.peer.wait", opTags, "seconds", "time spent waiting for other ranks",
                c -> of(c, op).peerWaitNanos() / 1e9);
            Gauge.builder("hccl.operation.bus.bandwidth", comm, c -> of(c, op).lastBusBandwidth()).tags(opTags)
                .baseUnit("GB/s").description("the latest call's bus bandwidth, as nccl-tests computes it")
                .register(registry);
        }
        counter(registry, "hccl.stalls", tags, null, "waits reported as stalled (HCCL_STALL_CHECK_TIME)",
            c -> c.metrics().stalls());
        Gauge.builder("hccl.failed", comm, c -> c.metrics().failure() == null ? 0 : 1).tags(tags)
            .description("1 once the communicator has failed").register(registry);
    }

    private void counter(final MeterRegistry registry, final String name, final Tags meterTags, final String unit,
        final String description, final ToDoubleFunction<Communicator> value)
    {
        FunctionCounter.builder(name, comm, value).tags(meterTags).baseUnit(unit).description(description)
            .register(registry);
    }

    private static OperationMetrics of(final Communicator comm, final Operation op)
    {
        return comm.metrics().of(op);
    }
}
