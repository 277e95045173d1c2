package dev.hccl.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The flag named by the E_ENV check, per path. ModulePathTest (hccl-bench) runs the check itself on the module path.
 */
class JvmFlagsTest
{
    @Test
    void onTheClassPathTheFlagOpensToAllUnnamedModules()
    {
        assertEquals("--add-opens java.base/jdk.internal.misc=ALL-UNNAMED",
            HcclProvider.requiredJvmFlag(JvmFlagsTest.class.getModule()));
        assertEquals(HcclProvider.REQUIRED_JVM_FLAG, HcclProvider.requiredJvmFlag(JvmFlagsTest.class.getModule()));
    }

    @Test
    void onTheModulePathTheFlagNamesTheModule()
    {
        final Module named = ModuleLayer.boot().findModule("java.logging").orElseThrow();
        assertEquals("--add-opens java.base/jdk.internal.misc=java.logging", HcclProvider.requiredJvmFlag(named));
    }

    @Test
    void theTestJvmsClassPathFlagPassesTheCheck()
    {
        // The surefire argLine carries --add-opens java.base/jdk.internal.misc=ALL-UNNAMED, and Agrona is unnamed here.
        assertDoesNotThrow(HcclProvider::checkJvmFlags);
    }
}
