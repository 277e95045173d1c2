package dev.hccl.tools.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class RankEnvironmentTest
{
    private static final String FLAG = "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED";
    private static final String MODULE_FLAG = "--add-modules=jdk.incubator.vector";
    private static final String NATIVE_FLAG = "--enable-native-access=ALL-UNNAMED";
    private static final String UNSAFE_FLAG = "-Dsun.misc.unsafe.memory.access=allow";

    /** What every rank gets, whatever its JDK, after whatever JDK_JAVA_OPTIONS held. */
    private static String flagsOfThisJdk()
    {
        return FLAG + " " + MODULE_FLAG + " " + NATIVE_FLAG + " " + UNSAFE_FLAG;
    }

    @Test
    @Timeout(10)
    void setsTheRendezvousVariablesAndKeepsTheRest()
    {
        Map<String, String> env = new HashMap<>(Map.of("PATH", "/bin", "RANK", "9", "JDK_JAVA_OPTIONS", "-Xmx1g"));

        RankEnvironment.apply(env, 2, 5, "10.0.0.7", 29500, "tok");

        assertEquals(Map.ofEntries(
                Map.entry("PATH", "/bin"),
                Map.entry("MASTER_ADDR", "10.0.0.7"),
                Map.entry("MASTER_PORT", "29500"),
                Map.entry("RANK", "2"),
                Map.entry("WORLD_SIZE", "5"),
                Map.entry("LOCAL_RANK", "2"),
                Map.entry("LOCAL_WORLD_SIZE", "5"),
                Map.entry("HCCL_JOB_TOKEN", "tok"),
                Map.entry("OMP_NUM_THREADS", Integer.toString(RankEnvironment.threadsPerRank(
                    Runtime.getRuntime().availableProcessors(), 5))),
                Map.entry("JDK_JAVA_OPTIONS", "-Xmx1g " + flagsOfThisJdk()),
                Map.entry(RankEnvironment.ADDED_VARIABLE, " " + flagsOfThisJdk())), env);
    }

    @Test
    @Timeout(10)
    void eachRankGetsItsShareOfTheCoresForNativeThreadsUnlessTheUserSetIt()
    {
        assertEquals(4, RankEnvironment.threadsPerRank(16, 4));
        assertEquals(1, RankEnvironment.threadsPerRank(2, 4));
        assertEquals(2, RankEnvironment.threadsPerRank(5, 2));
        Map<String, String> env = new HashMap<>(Map.of("OMP_NUM_THREADS", "3"));
        RankEnvironment.apply(env, 0, 2, "127.0.0.1", 29500, "tok");
        assertEquals("3", env.get("OMP_NUM_THREADS"));
    }

    @Test
    @Timeout(10)
    void whatWasAppendedIsNamedSoThatTheScriptsCanTakeItOff()
    {
        Map<String, String> env = new HashMap<>(Map.of(RankEnvironment.ADDED_VARIABLE, "stale"));
        RankEnvironment.apply(env, 0, 2, "127.0.0.1", 29500, "tok");
        assertEquals(flagsOfThisJdk(), env.get(RankEnvironment.ADDED_VARIABLE));

        // A blank value is replaced, so all of the new one was added.
        env = new HashMap<>(Map.of("JDK_JAVA_OPTIONS", "  "));
        RankEnvironment.apply(env, 0, 2, "127.0.0.1", 29500, "tok");
        assertEquals(flagsOfThisJdk(), env.get(RankEnvironment.ADDED_VARIABLE));

        // The user's value had every flag: nothing was added, nothing is to be taken off.
        env = new HashMap<>(Map.of("JDK_JAVA_OPTIONS", flagsOfThisJdk(), RankEnvironment.ADDED_VARIABLE, "stale"));
        RankEnvironment.apply(env, 0, 2, "127.0.0.1", 29500, "tok");
        assertEquals(flagsOfThisJdk(), env.get("JDK_JAVA_OPTIONS"));
        assertFalse(env.containsKey(RankEnvironment.ADDED_VARIABLE), env::toString);
    }

    @Test
    @Timeout(10)
    void aRankStartedAsJavaGetsTheFlagsOnItsCommandLineAndTheUsersOptionsBack()
    {
        final List<String> flags = List.of(flagsOfThisJdk().split(" "));
        Map<String, String> env = new HashMap<>(Map.of("JDK_JAVA_OPTIONS", "-Xmx1g"));
        RankEnvironment.apply(env, 0, 2, "127.0.0.1", 29500, "tok");
        final List<String> command = RankEnvironment.command(List.of("/opt/jdk/bin/java", "-cp", "app.jar", "Main"),
            env);
        final List<String> expected = new ArrayList<>(List.of("/opt/jdk/bin/java"));
        expected.addAll(flags);
        expected.addAll(List.of("-cp", "app.jar", "Main"));
        assertEquals(expected, command);
        assertEquals("-Xmx1g", env.get("JDK_JAVA_OPTIONS"));
        assertFalse(env.containsKey(RankEnvironment.ADDED_VARIABLE), env::toString);

        // Without options of the user's, the variable goes.
        env = new HashMap<>();
        RankEnvironment.apply(env, 0, 2, "127.0.0.1", 29500, "tok");
        assertEquals(flags.size() + 2, RankEnvironment.command(List.of("java", "Main"), env).size());
        assertFalse(env.containsKey("JDK_JAVA_OPTIONS"), env::toString);

        // A script keeps the flags in the variable, for the java it starts.
        env = new HashMap<>();
        RankEnvironment.apply(env, 0, 2, "127.0.0.1", 29500, "tok");
        assertEquals(List.of("bin/hccl-java", "Main"), RankEnvironment.command(List.of("bin/hccl-java", "Main"), env));
        assertEquals(flagsOfThisJdk(), env.get("JDK_JAVA_OPTIONS"));
    }

    @Test
    @Timeout(10)
    void ranksOfSeveralNodesGetTheirNodesLocalNumbering()
    {
        Map<String, String> env = new HashMap<>();

        RankEnvironment.apply(env, 3, 4, 1, 2, "10.77.0.1", 29500, "tok");

        assertEquals("3", env.get("RANK"));
        assertEquals("4", env.get("WORLD_SIZE"));
        assertEquals("1", env.get("LOCAL_RANK"));
        assertEquals("2", env.get("LOCAL_WORLD_SIZE"));
        assertEquals("10.77.0.1", env.get("MASTER_ADDR"));
    }

    @Test
    @Timeout(10)
    void ranksGetTheJvmFlagsEvenWithoutJdkJavaOptions()
    {
        Map<String, String> env = new HashMap<>();

        RankEnvironment.apply(env, 0, 1, "127.0.0.1", 29500, "tok");

        assertEquals(flagsOfThisJdk(), env.get("JDK_JAVA_OPTIONS"));
        // Applying again (a launcher inside a rank) adds nothing twice.
        assertEquals(env.get("JDK_JAVA_OPTIONS"),
                RankEnvironment.withJvmFlags(env.get("JDK_JAVA_OPTIONS")));
    }

    @Test
    @Timeout(10)
    void everyFlagIsOneThatEveryJdkAcceptsAndAUsersChoiceStays()
    {
        // A rank's java may be another JDK than the launcher's: JDK 17 to 22 refuse the option form.
        assertEquals(FLAG + " " + MODULE_FLAG + " " + NATIVE_FLAG + " " + UNSAFE_FLAG, RankEnvironment.withJvmFlags(null));
        // A value the user chose, as the option or the property, stays the only one; so does native access given
        // for a list of modules.
        String chosen = "--sun-misc-unsafe-memory-access=warn --enable-native-access=my.module,ALL-UNNAMED";
        assertEquals(chosen + " " + FLAG + " " + MODULE_FLAG, RankEnvironment.withJvmFlags(chosen));
        String property = "-Dsun.misc.unsafe.memory.access=deny";
        assertEquals(property + " " + FLAG + " " + MODULE_FLAG + " " + NATIVE_FLAG,
                RankEnvironment.withJvmFlags(property));
        // Native access for another module only is not ours.
        String other = "--enable-native-access=my.module";
        assertEquals(other + " " + FLAG + " " + MODULE_FLAG + " " + NATIVE_FLAG + " " + UNSAFE_FLAG,
                RankEnvironment.withJvmFlags(other));
    }

    @Test
    @Timeout(10)
    void vectorModuleIsAppendedOnlyWhenMissing()
    {
        assertEquals(MODULE_FLAG, RankEnvironment.withAddModules(null));
        assertEquals(MODULE_FLAG, RankEnvironment.withAddModules(" "));
        assertEquals("-Xss2m " + MODULE_FLAG, RankEnvironment.withAddModules("-Xss2m"));
        assertEquals("-ea " + MODULE_FLAG + " -Xss2m",
                RankEnvironment.withAddModules("-ea " + MODULE_FLAG + " -Xss2m"));
        // The other spelling, and the module inside a list, are the same request.
        for (String present : new String[] {
                "--add-modules jdk.incubator.vector",
                "--add-modules=java.sql,jdk.incubator.vector",
                "--add-modules jdk.incubator.vector,java.sql -ea"})
        {
            assertEquals(present, RankEnvironment.withAddModules(present));
        }
        // Another module, or a name that merely starts the same, is not.
        for (String absent : new String[] {
                "--add-modules=java.sql",
                "--add-modules=jdk.incubator.vectorx",
                "-Djdk.incubator.vector=1"})
        {
            assertEquals(absent + " " + MODULE_FLAG, RankEnvironment.withAddModules(absent));
        }
    }

    @Test
    @Timeout(10)
    void addOpensIsAppendedOnlyWhenMissing()
    {
        assertEquals(FLAG, RankEnvironment.withAddOpens(null));
        assertEquals(FLAG, RankEnvironment.withAddOpens("  "));
        assertEquals("-Xss2m " + FLAG, RankEnvironment.withAddOpens("-Xss2m"));
        assertEquals("-Xss2m " + FLAG + " -ea", RankEnvironment.withAddOpens("-Xss2m " + FLAG + " -ea"));
        String spaced = "--add-opens java.base/jdk.internal.misc=ALL-UNNAMED";
        assertEquals(spaced, RankEnvironment.withAddOpens(spaced));
        // A different package is a different flag.
        String other = "--add-opens=java.base/java.nio=ALL-UNNAMED";
        assertEquals(other + " " + FLAG, RankEnvironment.withAddOpens(other));
    }

    @Test
    @Timeout(10)
    void jobTokenIsInheritedOrFresh128Bits()
    {
        assertEquals("outer-token", RankEnvironment.jobToken(Map.of("HCCL_JOB_TOKEN", "outer-token")));

        String a = RankEnvironment.jobToken(Map.of());
        String b = RankEnvironment.jobToken(Map.of("HCCL_JOB_TOKEN", ""));
        assertTrue(a.matches("[0-9a-f]{32}"), a);
        assertTrue(b.matches("[0-9a-f]{32}"), b);
        assertNotEquals(a, b);
    }

    @Test
    @Timeout(10)
    void freePortCanBeBound() throws Exception
    {
        int port = RankEnvironment.freePort("127.0.0.1");

        assertTrue(port > 0 && port <= 65535, Integer.toString(port));
        try (ServerSocket s = new ServerSocket())
        {
            s.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port));
            assertEquals(port, s.getLocalPort());
        }
    }

    @Test
    @Timeout(10)
    void freePortFallsBackWhenTheAddressIsNotLocal() throws Exception
    {
        // 192.0.2.1 (TEST-NET-1) is never assigned to a local interface.
        int port = RankEnvironment.freePort("192.0.2.1");

        assertTrue(port > 0 && port <= 65535, Integer.toString(port));
    }
}
