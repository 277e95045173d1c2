package dev.hccl.tools.trace;

import dev.hccl.tools.launch.HcclRun;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
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
 * Exit status: 0; 1 when no dump is found or one cannot be read, said in one line on the error stream; 2 on a usage
 * error.
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
    private PrintWriter err = new PrintWriter(System.err, true);

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
        command.err = err;
        return new CommandLine(command).setOut(out).setErr(err).execute(args);
    }

    @Override
    public Integer call()
    {
        final List<Path> files = new ArrayList<>();
        for (final Path p : paths)
        {
            if (!Files.exists(p))
            {
                return fail(p + ": no such file or directory; give the directory HCCL_DUMP_DIR named when the job "
                    + "ran, or dump files (hccl-trace-*-r*.json)");
            }
            if (Files.isDirectory(p))
            {
                try (Stream<Path> list = Files.list(p))
                {
                    list.filter(f -> f.getFileName().toString().matches("hccl-trace-.*-r\\d+\\.json")).sorted()
                        .forEach(files::add);
                }
                catch (final IOException | UncheckedIOException ex)
                {
                    return fail("cannot list " + p + ": " + firstLine(ex));
                }
            }
            else
            {
                files.add(p);
            }
        }
        if (files.isEmpty())
        {
            return fail("no dump (hccl-trace-*-r*.json) in " + paths + "; the ranks write them to HCCL_DUMP_DIR when "
                + "a communicator fails or times out, or when Communicator.dumpTrace() is called");
        }
        final Map<String, List<TraceAnalysis.Dump>> byComm = new TreeMap<>();
        for (final Path f : files)
        {
            final TraceAnalysis.Dump d;
            try
            {
                d = TraceAnalysis.read(f);
            }
            catch (final IOException ex)
            {
                return fail("cannot read " + f + ": " + firstLine(ex));
            }
            byComm.computeIfAbsent(d.commId(), c -> new ArrayList<>()).add(d);
        }
        for (final List<TraceAnalysis.Dump> dumps : byComm.values())
        {
            out.println(TraceAnalysis.explain(dumps));
        }
        return 0;
    }

    /** Says what is wrong in one line, as a user error (no stack trace), and gives the exit status 1. */
    private int fail(final String message)
    {
        err.println("hccl-trace: " + message);
        return 1;
    }

    /** An exception's message without the lines a parser adds (Jackson's location), or its class when it has none. */
    private static String firstLine(final Exception ex)
    {
        final Throwable cause = ex instanceof UncheckedIOException ? ex.getCause() : ex;
        final String message = cause.getMessage();
        return message == null || message.isBlank() ? cause.getClass().getSimpleName() : message.lines().findFirst()
            .orElse(message);
    }
}
