package dev.hccl.tools.launch;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The environment that makes a plain process one rank of an hccl-java job: torchrun's rendezvous
 * variables, the job token, and the JVM flags that bin/lib/java.sh also gives. Flags that depend
 * on the JDK suit the launcher's own JDK, which the ranks run too (they inherit {@code JAVA_HOME}
 * and {@code PATH}).
 */
final class RankEnvironment
{
    /** The JVM flag that Agrona 2.x needs to reach {@code jdk.internal.misc.Unsafe}. */
    static final String ADD_OPENS = "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED";

    /**
     * The JVM flag that resolves the Vector API module, which the JVM leaves out by default:
     * without it the reduction kernels fall back to slower scalar loops (measured: docs/PERFORMANCE.md).
     */
    static final String ADD_MODULES = "--add-modules=jdk.incubator.vector";

    /** Keeps JDK 24+ from warning when Netty loads its native library; JDK 17 accepts it too, so every rank gets it. */
    static final String ENABLE_NATIVE_ACCESS = "--enable-native-access=ALL-UNNAMED";

    /**
     * Keeps JDK 24+ from warning when Netty uses {@code sun.misc.Unsafe}, and lets Netty 4.2 use it on JDK 25+.
     * A system property rather than {@code --sun-misc-unsafe-memory-access=allow}, which JDKs before 23 refuse at
     * startup: a rank's {@code java} may be another JDK than the launcher's.
     */
    static final String UNSAFE_MEMORY_ACCESS = "-Dsun.misc.unsafe.memory.access=allow";

    /**
     * Names what the launcher appended to a rank's {@code JDK_JAVA_OPTIONS}, so that bin/lib/java.sh, whose scripts
     * give the flags on the command line, can take it off again: the JVM prints "NOTE: Picked up JDK_JAVA_OPTIONS"
     * whenever that variable is set. Absent when nothing was appended (the user's value had every flag).
     */
    static final String ADDED_VARIABLE = "HCCL_JDK_JAVA_OPTIONS_ADDED";

    /**
     * The threads of a native library's parallel regions (OpenMP: libtorch under DJL, OpenBLAS, MKL). Left unset,
     * each rank starts one per core, so that the ranks of a node oversubscribe its cores many times over and their
     * spinning threads take turns (torchrun sets it to 1 for that reason); the launcher gives each rank its share of
     * the cores, unless the user set it.
     */
    static final String OMP_NUM_THREADS = "OMP_NUM_THREADS";

    /** Default rendezvous address: a single-node launcher always rendezvouses on loopback. */
    static final String DEFAULT_MASTER_ADDR = "127.0.0.1";

    // Both spellings the java launcher accepts count as "already present".
    private static final Pattern HAS_ADD_OPENS = Pattern.compile(
            "(^|\\s)--add-opens(=|\\s+)java\\.base/jdk\\.internal\\.misc=ALL-UNNAMED(\\s|$)");

    // Both spellings, and the module anywhere in a comma-separated list, count as "already present".
    private static final Pattern HAS_ADD_MODULES = Pattern.compile(
            "(^|\\s)--add-modules(=|\\s+)([^\\s,]+,)*jdk\\.incubator\\.vector(,\\S*)?(\\s|$)");

    // Any value already given, as the option or as the property, is the user's choice.
    private static final Pattern HAS_UNSAFE_MEMORY_ACCESS = Pattern.compile(
            "(^|\\s)(--sun-misc-unsafe-memory-access(=|\\s+)|-Dsun\\.misc\\.unsafe\\.memory\\.access=)\\S");

    // Both spellings, and ALL-UNNAMED anywhere in a comma-separated list, count as "already present".
    private static final Pattern HAS_ENABLE_NATIVE_ACCESS = Pattern.compile(
            "(^|\\s)--enable-native-access(=|\\s+)([^\\s,]+,)*ALL-UNNAMED(,\\S*)?(\\s|$)");

    private static final SecureRandom RANDOM = new SecureRandom();

    private RankEnvironment()
    {
    }

    /**
     * Sets the variables of one rank in {@code env}, which starts as a copy of the launcher's
     * environment (as {@link ProcessBuilder#environment()} does).
     *
     * @param env       the child's environment, modified in place
     * @param rank      this rank, 0-based
     * @param ranks     the number of ranks of the job (all local)
     * @param addr      the rendezvous address
     * @param port      the rendezvous port
     * @param jobToken  the token shared by all ranks of this launch
     */
    static void apply(Map<String, String> env, int rank, int ranks, String addr, int port,
                      String jobToken)
    {
        // One node: local and global numbering coincide.
        apply(env, rank, ranks, rank, ranks, addr, port, jobToken);
    }

    /**
     * A rank's share of the node's cores for {@link #OMP_NUM_THREADS}: at least one.
     *
     * @param cores     the cores the launcher may use.
     * @param localSize the ranks on the node.
     * @return the threads.
     */
    static int threadsPerRank(final int cores, final int localSize)
    {
        return Math.max(1, cores / Math.max(1, localSize));
    }

    /**
     * Sets the variables of one rank of a job whose ranks run on several (simulated) nodes.
     *
     * @param env       the child's environment, modified in place
     * @param rank      this rank, 0-based
     * @param ranks     the number of ranks of the job
     * @param localRank this rank's index among the ranks of its node
     * @param localSize the number of ranks on its node
     * @param addr      the rendezvous address
     * @param port      the rendezvous port
     * @param jobToken  the token shared by all ranks of this launch
     */
    static void apply(Map<String, String> env, int rank, int ranks, int localRank, int localSize, String addr,
                      int port, String jobToken)
    {
        env.put("MASTER_ADDR", addr);
        env.put("MASTER_PORT", Integer.toString(port));
        env.put("RANK", Integer.toString(rank));
        env.put("WORLD_SIZE", Integer.toString(ranks));
        env.put("LOCAL_RANK", Integer.toString(localRank));
        env.put("LOCAL_WORLD_SIZE", Integer.toString(localSize));
        env.put("HCCL_JOB_TOKEN", jobToken);
        env.putIfAbsent(OMP_NUM_THREADS, Integer.toString(threadsPerRank(Runtime.getRuntime().availableProcessors(),
            localSize)));
        final String before = env.get("JDK_JAVA_OPTIONS");
        final String after = withJvmFlags(before);
        env.put("JDK_JAVA_OPTIONS", after);
        final String added = appended(before, after);
        if (added.isEmpty())
        {
            env.remove(ADDED_VARIABLE);
        }
        else
        {
            env.put(ADDED_VARIABLE, added);
        }
    }

    /**
     * The command of a rank that {@link #apply} prepared. A rank started as {@code java ...} gets the flags the
     * launcher appended to {@code JDK_JAVA_OPTIONS} on its command line instead, right after {@code java}, and the
     * variable goes back to the user's value: the JVM prints "NOTE: Picked up JDK_JAVA_OPTIONS" whenever that
     * variable is set. Any other command (a script that starts java) keeps them in the variable.
     *
     * @param command the rank's command.
     * @param env     the rank's environment after {@link #apply}, modified in place.
     * @return the command to start.
     */
    static List<String> command(final List<String> command, final Map<String, String> env)
    {
        final String added = env.get(ADDED_VARIABLE);
        if (command.isEmpty() || added == null || !isJava(command.get(0)))
        {
            return command;
        }
        final String options = env.get("JDK_JAVA_OPTIONS");
        final String users = options.substring(0, options.length() - added.length());
        if (users.isBlank())
        {
            env.remove("JDK_JAVA_OPTIONS");
        }
        else
        {
            env.put("JDK_JAVA_OPTIONS", users);
        }
        env.remove(ADDED_VARIABLE);
        final List<String> withFlags = new ArrayList<>();
        withFlags.add(command.get(0));
        withFlags.addAll(List.of(added.trim().split("\\s+")));
        withFlags.addAll(command.subList(1, command.size()));
        return withFlags;
    }

    private static boolean isJava(final String program)
    {
        final Path name = Path.of(program).getFileName();
        return name != null && (name.toString().equals("java") || name.toString().equals("java.exe"));
    }

    /**
     * What {@link #withJvmFlags} appended: it keeps a non-blank value and appends to it, and replaces a blank one.
     *
     * @param before the value before, may be {@code null}
     * @param after  {@code withJvmFlags(before)}
     * @return the appended text, with its leading space; all of {@code after} when {@code before} was blank
     */
    static String appended(String before, String after)
    {
        return before == null || before.isBlank() ? after : after.substring(before.length());
    }

    /**
     * The job token for this launch: the launcher's own {@code HCCL_JOB_TOKEN} when set (so that an
     * outer tool can tie several launches together), otherwise 128 fresh random bits in hex.
     *
     * @param launcherEnv the launcher's environment
     * @return a non-empty token
     */
    static String jobToken(Map<String, String> launcherEnv)
    {
        String inherited = launcherEnv.get("HCCL_JOB_TOKEN");
        if (inherited != null && !inherited.isBlank())
        {
            return inherited;
        }
        byte[] bits = new byte[16];
        RANDOM.nextBytes(bits);
        return HexFormat.of().formatHex(bits);
    }

    /**
     * {@code existing} with every flag a rank's JVM needs appended, each unless it is already
     * there: {@link #ADD_OPENS}, {@link #ADD_MODULES}, {@link #ENABLE_NATIVE_ACCESS} and
     * {@link #UNSAFE_MEMORY_ACCESS}, which every JDK from 17 on accepts.
     *
     * @param existing the current {@code JDK_JAVA_OPTIONS}, may be {@code null}
     * @return the value to give the child
     */
    static String withJvmFlags(String existing)
    {
        return withFlag(withFlag(withAddModules(withAddOpens(existing)), ENABLE_NATIVE_ACCESS, HAS_ENABLE_NATIVE_ACCESS),
            UNSAFE_MEMORY_ACCESS, HAS_UNSAFE_MEMORY_ACCESS);
    }

    /**
     * {@code existing} with {@link #ADD_MODULES} appended unless the module is already added.
     *
     * @param existing the current {@code JDK_JAVA_OPTIONS}, may be {@code null}
     * @return the value to give the child
     */
    static String withAddModules(String existing)
    {
        return withFlag(existing, ADD_MODULES, HAS_ADD_MODULES);
    }

    /**
     * {@code existing} with {@link #ADD_OPENS} appended unless it is already there.
     *
     * @param existing the current {@code JDK_JAVA_OPTIONS}, may be {@code null}
     * @return the value to give the child
     */
    static String withAddOpens(String existing)
    {
        return withFlag(existing, ADD_OPENS, HAS_ADD_OPENS);
    }

    private static String withFlag(String existing, String flag, Pattern present)
    {
        if (existing == null || existing.isBlank())
        {
            return flag;
        }
        if (present.matcher(existing).find())
        {
            return existing;
        }
        return existing + " " + flag;
    }

    /**
     * A port that is free right now on {@code addr}, found by binding port 0. The ranks bind it
     * a moment later; the kernel does not hand the same ephemeral port out again that soon.
     *
     * @param addr the rendezvous address
     * @return a free TCP port
     * @throws IOException when no port can be bound at all
     */
    static int freePort(String addr) throws IOException
    {
        try (ServerSocket s = new ServerSocket())
        {
            s.bind(new InetSocketAddress(InetAddress.getByName(addr), 0));
            return s.getLocalPort();
        }
        catch (final IOException notLocal)
        {
            // The address may not be bindable here (a name for another interface, an unresolvable
            // name the ranks resolve differently): a port free on all interfaces is free on it too.
            try (ServerSocket s = new ServerSocket())
            {
                s.bind(new InetSocketAddress(0));
                return s.getLocalPort();
            }
        }
    }
}
