package dev.hccl.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The object collectives between real processes, whose JVMs are given a {@code jdk.serialFilter} that rejects one
 * class, as a user's allowlist would: the values travel, and the filter applies to what the ranks read from their
 * peers, failing every rank with a message that names the rank the value came from and the class.
 */
@Timeout(180)
class ObjectsProcessTest
{
    @Test
    void valuesTravelBetweenProcessesAndTheJvmWideFilterApplies() throws Exception
    {
        final String banned = ObjectsWorker.Banned.class.getName();
        try (ProcessJob job = ProcessJob.start(3, ObjectsWorker.class, "256m", Map.of("HCCL_EXEC_TIMEOUT", "60",
            "JDK_JAVA_OPTIONS", "-Djdk.serialFilter=!" + banned)))
        {
            for (int r = 0; r < 3; r++)
            {
                assertEquals(0, job.awaitExit(r, 120), job.outputs());
                final String out = job.output(r);
                assertTrue(out.contains("GATHERED [Report[rank=0, file=part-0.parquet, loss=0.0], Report[rank=1, " +
                    "file=part-1.parquet, loss=0.25], Report[rank=2, file=part-2.parquet, loss=0.5]]"),
                    "rank " + r + ":\n" + job.outputs());
                assertTrue(out.contains("CONFIG {from=rank 1, lr=0.01}"), "rank " + r + ":\n" + job.outputs());
                assertTrue(out.contains("FAILED peer=2 allGatherObject(java.lang.Object): the value from rank 2 " +
                    "does not deserialize: its class " + banned + " is rejected by the JVM-wide filter " +
                    "(jdk.serialFilter): allow it there on every rank, or send another"),
                    "rank " + r + ":\n" + job.outputs());
                assertTrue(out.contains("DONE 0,1,2"), "rank " + r + ":\n" + job.outputs());
            }
        }
    }
}
