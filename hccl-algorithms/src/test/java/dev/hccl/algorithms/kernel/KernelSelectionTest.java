package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(120)
class KernelSelectionTest
{
    /** Set by the build to the family each of its test runs is meant to exercise. */
    private static final String EXPECTED = System.getProperty("hccl.test.expectedKernels");

    @Test
    void autoPicksVectorExactlyWhenTheModuleIsPresent()
    {
        for (final String auto : new String[] { null, "", "auto", " AUTO " })
        {
            assertChoice(KernelFamily.VECTOR, false, KernelSelection.choose(auto, true));
            assertChoice(KernelFamily.SCALAR, false, KernelSelection.choose(auto, false));
        }
        assertTrue(KernelSelection.choose(null, false).reason().contains("--add-modules jdk.incubator.vector"));
    }

    @Test
    void propertyForcesAFamilyWhereItCan()
    {
        assertChoice(KernelFamily.SCALAR, false, KernelSelection.choose("scalar", true));
        assertChoice(KernelFamily.SCALAR, false, KernelSelection.choose("Scalar", false));
        assertChoice(KernelFamily.VECTOR, false, KernelSelection.choose("vector", true));
        // Vector kernels cannot run without the module: scalar, with a warning rather than a broken library.
        final KernelSelection.Choice impossible = KernelSelection.choose("vector", false);
        assertChoice(KernelFamily.SCALAR, true, impossible);
        assertTrue(impossible.reason().contains("not resolved"), impossible.reason());
    }

    @Test
    void unknownPropertyValueWarnsAndFallsBackToAuto()
    {
        assertChoice(KernelFamily.VECTOR, true, KernelSelection.choose("simd", true));
        assertChoice(KernelFamily.SCALAR, true, KernelSelection.choose("simd", false));
        assertTrue(KernelSelection.choose("simd", true).reason().contains("simd"));
    }

    @Test
    void thisJvmRunsTheFamilyTheBuildAskedFor()
    {
        final boolean present = ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent();
        assertEquals(present, KernelSelection.vectorModulePresent());
        final KernelFamily expected =
            KernelSelection.choose(System.getProperty(KernelSelection.PROPERTY), present).family();
        assertEquals(expected, Reducers.family());
        if (EXPECTED != null)
        {
            // The two surefire executions must really cover both families.
            assertEquals(EXPECTED.toUpperCase(java.util.Locale.ROOT), Reducers.family().name());
        }

        // INT8 always has a vector kernel in the vector family; the 64-bit types never do.
        final boolean vectorKernels = Reducers.family() == KernelFamily.VECTOR;
        for (final ReduceOp op : new ReduceOp[] { ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN })
        {
            assertEquals(vectorKernels, Reducers.of(DataType.INT8, op) instanceof AbstractVectorReducer, op.name());
            assertEquals(vectorKernels, Reducers.of(DataType.UINT8, op) instanceof AbstractVectorReducer, op.name());
            assertFalse(Reducers.of(DataType.INT64, op) instanceof AbstractVectorReducer, op.name());
            assertFalse(Reducers.of(DataType.FP64, op) instanceof AbstractVectorReducer, op.name());
            // FP16 and BF16 only on request.
            assertFalse(Reducers.of(DataType.BF16, op) instanceof AbstractVectorReducer, op.name());
        }
    }

    @Test
    void halfFloatVectorsOnlyOnRequest()
    {
        assertTrue(KernelSelection.halfFloatVectors("vector"));
        assertTrue(KernelSelection.halfFloatVectors(" Vector "));
        assertFalse(KernelSelection.halfFloatVectors(null));
        assertFalse(KernelSelection.halfFloatVectors("scalar"));
        assertFalse(KernelSelection.halfFloatVectors("true"));
    }

    @Test
    void aJvmWithoutTheModuleLoadsTheScalarKernels() throws Exception
    {
        final Run run = launch(List.of());
        assertTrue(run.out.contains("family=SCALAR"), run.out);
        assertTrue(run.out.contains("DEBUG") && run.out.contains("reduction kernels: scalar"), run.out);
        assertTrue(run.out.contains("--add-modules jdk.incubator.vector"), "says how to enable: " + run.out);
    }

    @Test
    void aJvmWithTheModuleLoadsTheVectorKernels() throws Exception
    {
        final Run run = launch(List.of("--add-modules", "jdk.incubator.vector"));
        assertTrue(run.out.contains("family=VECTOR"), run.out);
        assertTrue(run.out.contains("DEBUG") && run.out.contains("reduction kernels: vector"), run.out);
    }

    @Test
    void thePropertyForcesScalarEvenWithTheModule() throws Exception
    {
        final Run run = launch(List.of("--add-modules", "jdk.incubator.vector", "-Dhccl.kernels=scalar"));
        assertTrue(run.out.contains("family=SCALAR"), run.out);
        assertTrue(run.out.contains("forced by -Dhccl.kernels=scalar"), run.out);
    }

    @Test
    void forcingVectorWithoutTheModuleWarnsAndRunsScalar() throws Exception
    {
        final Run run = launch(List.of("-Dhccl.kernels=vector"));
        assertTrue(run.out.contains("family=SCALAR"), run.out);
        assertTrue(run.out.contains("WARN"), run.out);
        assertFalse(run.out.contains("NoClassDefFoundError"), run.out);
    }

    @Test
    void withoutAnSlf4jBindingTheWarningGoesToStderr() throws Exception
    {
        // SLF4J without a provider drops every message; a family that could not start must still be seen.
        final String classPath = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
            .filter(entry -> !entry.contains("slf4j-simple"))
            .collect(Collectors.joining(File.pathSeparator));
        final Run run = launch(List.of("-Dhccl.kernels=vector"), classPath);
        assertTrue(run.out.contains("family=SCALAR"), run.out);
        assertTrue(run.out.contains("WARNING: hccl-java reduction kernels: scalar: -Dhccl.kernels=vector, but"), run.out);
        assertFalse(run.out.contains("[main] WARN"), "no SLF4J binding was meant to be left: " + run.out);
    }

    private static void assertChoice(
        final KernelFamily family, final boolean warn, final KernelSelection.Choice choice)
    {
        assertEquals(family, choice.family(), choice.toString());
        assertEquals(warn, choice.warn(), choice.toString());
        assertFalse(choice.reason().isBlank());
    }

    private record Run(int exitCode, String out)
    {
    }

    /**
     * Runs {@link KernelFamilyProbe} in a fresh JVM with this JVM's class path and the given extra options, with
     * DEBUG logging (the family chosen is logged at DEBUG), and returns its combined output; fails unless it exits
     * with 0.
     */
    private static Run launch(final List<String> options) throws IOException, InterruptedException
    {
        return launch(options, System.getProperty("java.class.path"));
    }

    private static Run launch(final List<String> options, final String classPath)
        throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=debug");
        command.addAll(options);
        command.add("-cp");
        command.add(classPath);
        command.add(KernelFamilyProbe.class.getName());

        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        // The child must not inherit options meant for this JVM, such as the module flag under test.
        builder.environment().remove("JDK_JAVA_OPTIONS");
        builder.environment().remove("JAVA_TOOL_OPTIONS");
        final Process process = builder.start();
        final byte[] output = process.getInputStream().readAllBytes();
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "probe JVM timed out");
        final Run run = new Run(process.exitValue(), new String(output, StandardCharsets.UTF_8));
        assertEquals(0, run.exitCode, run.out);
        return run;
    }
}
