package dev.hccl.tools;

import dev.hccl.tools.bench.HcclBench;
import dev.hccl.tools.check.SelfCheck;
import dev.hccl.tools.gradbench.GradientStepBench;
import dev.hccl.tools.launch.HcclRun;
import dev.hccl.tools.status.HcclStatus;
import dev.hccl.tools.topo.HcclTopo;
import dev.hccl.tools.trace.HcclTrace;

import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The tools jar's entry point, {@code java -jar hccl-tools.jar TOOL ARGS...}: every tool of the repository's
 * {@code bin/} without the repository. {@code run} is {@code hcclrun}; a rank's command may name another tool
 * ({@code java -jar hccl-tools.jar run -np 4 bench all_reduce}), which each rank then runs from this same jar.
 */
public final class Tools
{
    /** The system property through which {@code run} tells the launcher where this jar is. */
    public static final String JAR_PROPERTY = "hccl.tools.jar";

    /** A tool: its name here, the script's name in {@code bin/}, what it does, and its main. */
    private record Tool(String name, String script, String summary, Consumer<String[]> main)
    {
    }

    private static final Map<String, Tool> TOOLS = new LinkedHashMap<>();

    static
    {
        for (final Tool t : List.of(
            new Tool("run", "hcclrun", "start N local ranks of a command as one job (run -np 4 bench ...)",
                args -> HcclRun.main(args, Tools::expand)),
            new Tool("bench", "hccl-bench", "nccl-tests for hccl-java: one collective over a sweep of sizes",
                HcclBench::main),
            new Tool("step-bench", "hccl-step-bench", "one training step's gradient synchronisation",
                GradientStepBench::main),
            new Tool("topo", "hccl-topo", "the job's topology, transports and links", HcclTopo::main),
            new Tool("trace", "hccl-trace", "reads the flight recorder's dumps and says what went wrong",
                HcclTrace::main),
            new Tool("status", "hccl-status", "where every rank of a running job is, and which one is behind",
                HcclStatus::main),
            new Tool("check", "SelfCheck", "every collective of this build against the reference", SelfCheck::main)))
        {
            TOOLS.put(t.name(), t);
        }
    }

    private Tools()
    {
    }

    /**
     * @param args the tool's name, then its arguments.
     */
    public static void main(final String[] args)
    {
        if (args.length == 0 || args[0].equals("--help") || args[0].equals("-h"))
        {
            usage(System.out);
            return;
        }
        final Tool tool = of(args[0]);
        if (tool == null)
        {
            System.err.println("hccl-tools: no tool '" + args[0] + "'");
            usage(System.err);
            System.exit(ToolCommand.USAGE);
            return;
        }
        final Path jar = ownJar();
        if (jar != null)
        {
            System.setProperty(JAR_PROPERTY, jar.toString());
        }
        tool.main().accept(Arrays.copyOfRange(args, 1, args.length));
    }

    /**
     * The command a rank runs, when it names a tool of this jar and the launcher runs from it: this JVM's java with
     * {@code -jar} and this jar. Any other command is left as it is.
     *
     * @param command the rank's command.
     * @return the command to start.
     */
    public static List<String> expand(final List<String> command)
    {
        final String jar = System.getProperty(JAR_PROPERTY);
        final Tool tool = command.isEmpty() || jar == null ? null : of(command.get(0));
        if (tool == null || tool.name().equals("run"))
        {
            return command;
        }
        final List<String> expanded = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", jar, tool.name()));
        expanded.addAll(command.subList(1, command.size()));
        return expanded;
    }

    /** A tool by its name here or its script's name. */
    private static Tool of(final String name)
    {
        final String n = name.toLowerCase(Locale.ROOT);
        return TOOLS.values().stream().filter(t -> t.name().equals(n) || t.script().equalsIgnoreCase(n)).findFirst()
            .orElse(null);
    }

    private static Path ownJar()
    {
        try
        {
            final Path path = Path.of(Tools.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return path.toString().endsWith(".jar") ? path : null;
        }
        catch (final URISyntaxException | SecurityException | NullPointerException ex)
        {
            return null;
        }
    }

    private static void usage(final PrintStream out)
    {
        out.println("usage: java -jar hccl-tools.jar TOOL [ARGS...]   (each tool's --help tells its arguments)");
        for (final Tool t : TOOLS.values())
        {
            out.printf("  %-11s %s (bin/%s)%n", t.name(), t.summary(), t.script());
        }
        out.println("example: java -jar hccl-tools.jar run -np 4 bench all_reduce -b 8 -e 128M -f 2");
    }
}
