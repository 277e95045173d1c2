package dev.hccl.dist;

import dev.hccl.tools.Tool;
import dev.hccl.tools.ToolCommand;
import dev.hccl.tools.ToolSet;
import dev.hccl.tools.launch.HcclRun;

import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceLoader;

/**
 * The tools jar's entry point, {@code java -jar hccl-tools.jar TOOL ARGS...}: every tool of the repository's
 * {@code bin/} without the repository. The tools are those the jar's modules contribute as {@link ToolSet}s, found
 * with {@link ServiceLoader} (hccl-tools' operator tools, hccl-bench's benchmarks), and this class's own {@code run},
 * which is {@code hcclrun}: a rank's command may name another tool ({@code java -jar hccl-tools.jar run -np 4 bench
 * all_reduce}), which each rank then runs from this same jar.
 */
public final class ToolsJar
{
    /** The system property through which {@code run} tells the launcher where this jar is. */
    public static final String JAR_PROPERTY = "hccl.tools.jar";

    private static final Map<String, Tool> TOOLS = new LinkedHashMap<>();

    static
    {
        final List<Tool> tools = new ArrayList<>(List.of(new Tool("run", "hcclrun",
            "start N local ranks of a command as one job (run -np 4 bench ...)",
            args -> HcclRun.main(args, ToolsJar::expand))));
        for (final ToolSet set : ServiceLoader.load(ToolSet.class, ToolsJar.class.getClassLoader()))
        {
            tools.addAll(set.tools());
        }
        for (final Tool t : tools)
        {
            final Tool before = TOOLS.putIfAbsent(t.name(), t);
            if (before != null)
            {
                throw new IllegalStateException("two tools named '" + t.name() + "' (bin/" + before.script() +
                    " and bin/" + t.script() + "): the tools jar was assembled from conflicting modules");
            }
        }
    }

    private ToolsJar()
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
            final Path path = Path.of(ToolsJar.class.getProtectionDomain().getCodeSource().getLocation().toURI());
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
