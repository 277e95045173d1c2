package dev.hccl.micrometer;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.training.Compression;
import dev.hccl.training.GradientSync;
import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
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
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A {@link GradientSync}'s meters in a real Prometheus registry: two steps under fp16, the second of which holds a
 * value beyond binary16's range, give two steps, one fallback to FP32 and the latest step's wait. Ranks as threads.
 */
@Timeout(120)
class GradientSyncMetersTest
{
    private static final int COUNT = 256;

    @Test
    void stepsFallbacksAndTheLatestWaitAreScraped() throws Exception
    {
        final List<Communicator> comms = Hccl.initAll(2, CommConfig.builder().environment(Map.of()).worldSize(2)
            .conclude());
        final ExecutorService pool = Executors.newFixedThreadPool(2);
        final List<String> scraped = new ArrayList<>();
        try
        {
            final List<Future<String>> done = new ArrayList<>();
            for (final Communicator comm : comms)
            {
                done.add(pool.submit(() -> steps(comm)));
            }
            for (final Future<String> f : done)
            {
                scraped.add(f.get(60, TimeUnit.SECONDS));
            }
        }
        finally
        {
            pool.shutdownNow();
            comms.forEach(Communicator::close);
        }
        for (final String text : scraped)
        {
            assertEquals(2.0, value(text, "hccl_gradient_sync_steps_total{model=\"mlp\"}"), text);
            assertEquals(1.0, value(text, "hccl_gradient_sync_fallbacks_total{model=\"mlp\"}"), text);
            assertTrue(value(text, "hccl_gradient_sync_last_wait_seconds{model=\"mlp\"}") >= 0, text);
        }
    }

    private static String steps(final Communicator comm)
    {
        final ByteBuffer gradient = ByteBuffer.allocateDirect(COUNT * 4).order(ByteOrder.nativeOrder());
        try (GradientSync sync = GradientSync.builder(comm).compression(Compression.fp16()).build(List.of(gradient),
            DataType.FP32))
        {
            final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            new GradientSyncMeters(sync, Tags.of("model", "mlp")).bindTo(registry);
            for (final float value : new float[] {1f, 1e6f})
            {
                for (int i = 0; i < COUNT; i++)
                {
                    gradient.putFloat(i * 4, value);
                }
                sync.markReady(0);
                sync.await();
            }
            return registry.scrape();
        }
    }

    private static double value(final String scraped, final String series)
    {
        final Matcher m = Pattern.compile("^" + Pattern.quote(series) + " (\\S+)$", Pattern.MULTILINE)
            .matcher(scraped);
        assertTrue(m.find(), "no " + series);
        return Double.parseDouble(m.group(1));
    }
}
