package dev.hccl.tools.launch;

import dev.hccl.tools.ScriptCheckout;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A working job is quiet: the README's "Try it", {@code bin/hcclrun -np 3 bin/hccl-java AllReduceExample}, through the
 * real scripts and with the library's default logging (INFO), prints on stderr the one line of rank 0 that sums up
 * the job, and per rank only the JVM's own "WARNING: Using incubator modules", which no flag turns off while the
 * reduction kernels use the Vector API. No "NOTE: Picked up JDK_JAVA_OPTIONS": the script gives the flags on the
 * command line and takes off what the launcher put in that variable, and a rank started as {@code java} gets them on
 * its command line from the launcher. A new INFO line, or a new warning, fails this.
 */
@Timeout(120)
class QuietJobTest
{
    private static final int RANKS = 3;
    private static final String INCUBATOR = "WARNING: Using incubator modules: ";
    /** Rank 0's summary, with the version of hccl-core's jar (none when the tests run on classes). */
    private static final Pattern SUMMARY = Pattern.compile("\\[0] \\[main] INFO dev\\.hccl\\.core\\.HcclProvider - " +
        "hccl-java( [0-9][^ ]*)?: 3 ranks on 1 node; .*; algorithms: .*");

    @TempDir
    Path tmp;

    /**
     * Through {@code bin/hccl-java}, as the README's "Try it", and as {@code java} itself, as a user's own program
     * (the launcher gives it the flags on its command line).
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = { "hccl-java", "java" })
    void theReadmesJobPrintsOneLineOfOursOnStderr(final String rankCommand) throws Exception
    {
        final ScriptCheckout.Run run = ScriptCheckout.hcclrun(tmp, "hccl-java", "-np", Integer.toString(RANKS),
            rankCommand, "dev.hccl.examples.AllReduceExample");
        assertEquals(0, run.status(), () -> run.stdout() + "\nstderr:\n" + run.stderr());
        assertEquals(RANKS, run.stdout().lines().filter(l -> l.endsWith(": OK")).count(), run.stdout());

        // The Vector API's module, and on JDK 17 the foreign linker's, which the scripts give there (not the launcher
        // to a rank started as java: other JDKs lack it); the JVM lists them in either order.
        final Set<String> modules = "hccl-java".equals(rankCommand) && Runtime.version().feature() == 17 ?
            Set.of("jdk.incubator.vector", "jdk.incubator.foreign") : Set.of("jdk.incubator.vector");
        final List<String> rest = new ArrayList<>(run.stderr().lines().toList());
        for (int r = 0; r < RANKS; r++)
        {
            final String prefix = "[" + r + "] " + INCUBATOR;
            final String warning = rest.stream().filter(l -> l.startsWith(prefix)).findFirst().orElse(null);
            assertTrue(warning != null && rest.remove(warning), () -> "the JVM's incubator warning: " + run.stderr());
            assertEquals(modules, Set.of(warning.substring(prefix.length()).split(", ")), warning);
        }
        assertEquals(1, rest.size(), () -> "one line of ours besides the JVM's warnings:\n" + run.stderr());
        assertTrue(SUMMARY.matcher(rest.get(0)).matches(),
            () -> "rank 0's summary: " + run.stderr());
    }
}
