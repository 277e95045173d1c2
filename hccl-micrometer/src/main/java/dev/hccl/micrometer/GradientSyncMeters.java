package dev.hccl.micrometer;

import dev.hccl.training.GradientSync;
import dev.hccl.training.StepReport;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Binds a {@link GradientSync}'s counters to a Micrometer registry, beside its communicator's ({@link HcclMeters}):
 * <ul>
 *     <li>{@code hccl.gradient.sync.steps} (counter): steps ended;</li>
 *     <li>{@code hccl.gradient.sync.fallbacks} (counter): buckets that fp16 or bf16 had to all-reduce again in FP32,
 *     an infinity or a NaN in them (many mean the gradients outgrow the 16-bit range: scale the loss down, or use
 *     bf16);</li>
 *     <li>{@code hccl.gradient.sync.last.wait} (gauge, seconds): the latest step's exposed communication, the time
 *     its {@code await()} waited.</li>
 * </ul>
 * Needs {@code hccl-training} on the class path, as a training job has it.
 */
public final class GradientSyncMeters implements MeterBinder
{
    private final GradientSync sync;
    private final Tags tags;

    /**
     * @param sync the gradient synchronisation.
     * @param tags tags for every meter (the communicator's id and rank, the model's name, say).
     */
    public GradientSyncMeters(final GradientSync sync, final Iterable<Tag> tags)
    {
        this.sync = sync;
        this.tags = Tags.of(tags);
    }

    @Override
    public void bindTo(final MeterRegistry registry)
    {
        FunctionCounter.builder("hccl.gradient.sync.steps", sync, GradientSync::steps).tags(tags)
            .description("steps ended").register(registry);
        FunctionCounter.builder("hccl.gradient.sync.fallbacks", sync, GradientSync::fallbacks).tags(tags)
            .description("buckets that a 16-bit compression had to all-reduce again in FP32").register(registry);
        Gauge.builder("hccl.gradient.sync.last.wait", sync, s ->
        {
            final StepReport last = s.lastStep();
            return last == null ? 0 : last.waitNanos() / 1e9;
        }).tags(tags).baseUnit("seconds").description("the latest step's exposed communication").register(registry);
    }
}
