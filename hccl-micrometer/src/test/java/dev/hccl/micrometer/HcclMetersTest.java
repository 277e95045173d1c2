package dev.hccl.micrometer;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;
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
 * A communicator's meters in a real Prometheus registry: after three all-reduces of 4,000 bytes and a broadcast, the
 * scraped text holds, for this rank and communicator, the calls, their time, the bytes, the peer wait and the bus
 * bandwidth per operation, zero for operations never called, and the stalls and failure gauges. Ranks as threads.
 */
@Timeout(120)
class HcclMetersTest
{
    @Test
    void aPrometheusScrapeShowsTheCommunicatorsOperations() throws Exception
    {
        final List<Communicator> comms = Hccl.initAll(2, CommConfig.builder().environment(Map.of()).worldSize(2)
            .conclude());
        try
        {
            final ExecutorService pool = Executors.newFixedThreadPool(2);
            final List<Future<?>> done = new ArrayList<>();
            for (final Communicator comm : comms)
            {
                done.add(pool.submit(() ->
                {
                    final ByteBuffer data = ByteBuffer.allocateDirect(4000).order(ByteOrder.nativeOrder());
                    for (int i = 0; i < 3; i++)
                    {
                        comm.allReduce(data, data, 1000, DataType.FP32, ReduceOp.SUM);
                    }
                    comm.broadcast(data, 10, DataType.INT64, 0);
                }));
            }
            for (final Future<?> f : done)
            {
                f.get(60, TimeUnit.SECONDS);
            }
            pool.shutdown();

            final Communicator rank1 = comms.get(1);
            final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            new HcclMeters(rank1, io.micrometer.core.instrument.Tags.of("job", "test")).bindTo(registry);
            final String scraped = registry.scrape();
            final String id = rank1.metrics().communicatorId();
            final String allReduce = "{communicator=\"" + id + "\",job=\"test\",operation=\"allReduce\",rank=\"1\"}";
            assertEquals(3.0, value(scraped, "hccl_operation_seconds_count" + allReduce), scraped);
            assertTrue(value(scraped, "hccl_operation_seconds_sum" + allReduce) > 0, scraped);
            assertEquals(12000.0, value(scraped, "hccl_operation_bytes_total" + allReduce), scraped);
            assertEquals(0.0, value(scraped, "hccl_operation_failed_total" + allReduce), scraped);
            assertTrue(value(scraped, "hccl_operation_peer_wait_seconds_total" + allReduce) >= 0, scraped);
            assertTrue(value(scraped, "hccl_operation_bus_bandwidth_GB_s" + allReduce) > 0, scraped);
            final String broadcast = allReduce.replace("allReduce", "broadcast");
            assertEquals(80.0, value(scraped, "hccl_operation_bytes_total" + broadcast), scraped);
            assertEquals(0.0, value(scraped, "hccl_operation_seconds_count" + allReduce.replace("allReduce",
                "allToAll")), scraped);
            final String whole = "{communicator=\"" + id + "\",job=\"test\",rank=\"1\"}";
            assertEquals(0.0, value(scraped, "hccl_stalls_total" + whole), scraped);
            assertEquals(0.0, value(scraped, "hccl_failed" + whole), scraped);
        }
        finally
        {
            comms.forEach(Communicator::close);
        }
    }

    /** The value of one scraped series. */
    private static double value(final String scraped, final String series)
    {
        final Matcher m = Pattern.compile("^" + Pattern.quote(series) + " (\\S+)$", Pattern.MULTILINE)
            .matcher(scraped);
        assertTrue(m.find(), "no " + series);
        return Double.parseDouble(m.group(1));
    }
}
