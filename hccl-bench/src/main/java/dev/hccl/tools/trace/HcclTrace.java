package dev.hccl.tools.trace;

import dev.hccl.tools.launch.HcclRun;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

/**
 * {@code hccl-trace}: reads the flight recorders every rank wrote ({@code HCCL_DUMP_DIR}, or
 * {@code Communicator.dumpTrace()}) and says, for each communicator, what went wrong in one paragraph.
 * <p>
 * Exit status: 0; 1 when no dump is found or one cannot be read; 2 on a usage error.
 */
@Command(name = "hccl-trace",
    mixinStandardHelpOptions = true,
    version = "hccl-trace " + HcclRun.VERSION,
    usageHelpAutoWidth = true,
    description = {
        "Reads the flight recorders (hccl-trace-<communicator>-r<rank>.json) that the ranks of a job wrote on "
            + "failure, on timeout or on demand, and says for each communicator in one paragraph what went wrong: "
            + "the rank that never issued an operation the others did, the ranks that issued different operations, "
            + "the operations still running, the failure, and the slowest rank.",
        ""},
    footer = {"", "Exit status: 0 OK; 1 no dump found or one unreadable; 2 a usage error.", "",
        "Example: HCCL_DUMP_DIR=/shared/dumps bin/hcclrun -np 4 ...; bin/hccl-trace /shared/dumps"})
public final class HcclTrace implements Callable<Integer>
{
    @Parameters(arity = "1..*", paramLabel = "PATH", description = "Dump files, or directories to read them from.")
    private List<Path> paths;

    private PrintWriter out = new PrintWriter(System.out, true);

    /**
     * @param args the command line.
     */
    public static void main(final String[] args)
    {
        System.exit(run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
    }

    /**
     * Runs the command.
     *
     * @param out  where the report goes.
     * @param err  where errors go.
     * @param args the command line.
     * @return the exit status.
     */
    public static int run(final PrintWriter out, final PrintWriter err, final String... args)
    {
        final HcclTrace command = new HcclTrace();
        command.out = out;
        return new CommandLine(command).setOut(out).setErr(err).execute(args);
    }

    @Override
    public Integer call() throws IOException
    {
        final List<Path> files = new ArrayList<>();
        for (final Path p : paths)
        {
            if (Files.isDirectory(p))
            {
                try (Stream<Path> list = Files.list(p))
                {
                    list.filter(f -> f.getFileName().toString().matches("hccl-trace-.*-r\\d+\\.json")).sorted()
                        .forEach(files::add);
                }
            }
            else
            {
                files.add(p);
            }
        }
        if (files.isEmpty())
        {
            out.println("hccl-trace: no dump (hccl-trace-*-r*.json) in " + paths);
            return 1;
        }
        final Map<String, List<TraceAnalysis.Dump>> byComm = new TreeMap<>();
        for (final Path f : files)
        {
            final TraceAnalysis.Dump d = TraceAnalysis.read(f);
            byComm.computeIfAbsent(d.commId(), c -> new ArrayList<>()).add(d);
        }
        for (final List<TraceAnalysis.Dump> dumps : byComm.values())
        {
            out.println(TraceAnalysis.explain(dumps));
        }
        return 0;
    }
}
