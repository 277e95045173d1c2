package dev.hccl.tools;

import picocli.CommandLine;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Runs a tool's picocli command the way every tool that each rank of a job runs does: output and errors to the given
 * streams, and a usage error reported by every rank (rank 0 alone might be stopped by the launcher before it could),
 * with exit status {@link #USAGE}.
 */
public final class ToolCommand
{
    /** The exit status of a usage error, as in nccl-tests and most Unix tools. */
    public static final int USAGE = 2;

    private static final String LOG_LEVEL = "org.slf4j.simpleLogger.defaultLogLevel";

    private ToolCommand()
    {
    }

    /**
     * Turns the library's log down to WARN unless the user chose a level: a tool's table or report is its output, and
     * the INFO lines of communicator creation would only bury it.
     */
    public static void quietLibraryLog()
    {
        if (System.getProperty(LOG_LEVEL) == null)
        {
            System.setProperty(LOG_LEVEL, "warn");
        }
    }

    /**
     * @param name    the tool's name, for the messages: {@code hccl-bench}.
     * @param command the picocli command object.
     * @param args    the command line.
     * @param out     receives {@code --help} and whatever the command prints there.
     * @param err     receives usage errors.
     * @return the command's exit status, or {@link #USAGE}.
     */
    public static int execute(
        final String name, final Object command, final String[] args, final PrintStream out, final PrintStream err)
    {
        final CommandLine cl = new CommandLine(command)
            .setOut(new PrintWriter(out, true))
            .setErr(new PrintWriter(err, true))
            .setParameterExceptionHandler(usageErrors(name));
        final int status = cl.execute(args);
        out.flush();
        err.flush();
        return status;
    }

    /**
     * How every tool reports a usage error: {@code NAME: REASON} and one line of hint, never the whole usage, which
     * would bury the reason; the exit status is {@link #USAGE}.
     *
     * @param name the tool's name, for the messages: {@code hcclrun}.
     * @return the handler to give picocli.
     */
    public static IParameterExceptionHandler usageErrors(final String name)
    {
        return (ex, ignored) ->
        {
            final PrintWriter w = ex.getCommandLine().getErr();
            w.println(name + ": " + ex.getMessage());
            w.println(hint(name, ex));
            w.flush();
            return USAGE;
        };
    }

    /**
     * The hint under a usage error: where the options are described, after picocli's guesses for an unknown option
     * (each option once, by its first name, though it has several spellings).
     */
    static String hint(final String name, final ParameterException ex)
    {
        final String help = "Try '" + name + " --help' for more information.";
        if (!(ex instanceof UnmatchedArgumentException unmatched))
        {
            return help;
        }
        final Set<String> guesses = new LinkedHashSet<>();
        for (final String suggestion : unmatched.getSuggestions())
        {
            final OptionSpec option = ex.getCommandLine().getCommandSpec().findOption(suggestion);
            guesses.add(option == null ? suggestion : option.names()[0]);
        }
        return guesses.isEmpty() ? help : "Did you mean " + String.join(" or ", guesses) + "? " + help;
    }
}
