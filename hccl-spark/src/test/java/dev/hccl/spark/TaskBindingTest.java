package dev.hccl.spark;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A set-up that fails for want of a JVM flag says, under Spark, which of Spark's settings gives the executors (and,
 * in local mode, the driver) their flags; other failures pass through as they are.
 */
class TaskBindingTest
{
    @Test
    void aMissingJvmFlagNamesSparksSettings()
    {
        final HcclException missing = new HcclException(ErrorCode.E_ENV,
            "hccl-java needs the JVM flag '--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED'");
        final HcclException said = assertInstanceOf(HcclException.class, TaskBinding.inSpark(missing));
        assertEquals(ErrorCode.E_ENV, said.errorCode());
        assertSame(missing, said.getCause());
        assertTrue(said.getMessage().contains("--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED"), said.getMessage());
        assertTrue(said.getMessage().contains("spark.executor.extraJavaOptions"), said.getMessage());
        assertTrue(said.getMessage().contains("spark.driver.extraJavaOptions"), said.getMessage());
    }

    @Test
    void otherFailuresPassThrough()
    {
        final HcclException timeout = new HcclException(ErrorCode.E_TIMEOUT, "rank [3] of 4 did not arrive");
        assertSame(timeout, TaskBinding.inSpark(timeout));
        final IllegalStateException other = new IllegalStateException("x");
        assertSame(other, TaskBinding.inSpark(other));
    }
}
