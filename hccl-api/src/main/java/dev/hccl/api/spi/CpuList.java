package dev.hccl.api.spi;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * CPU sets in Linux's list format ({@code 0-3,8,10-11}), and the set this process may run on: what a launcher's
 * binding ({@code hcclrun --bind-to}, Open MPI's {@code --bind-to}, Slurm's {@code --cpu-bind}) or a container's
 * cpuset left it.
 */
public final class CpuList
{
    /**
     * The highest CPU number a list may hold: above Linux's largest build ({@code NR_CPUS} 8192), so that a list a peer
     * published cannot make a set of billions.
     */
    public static final int MAX_CPU = 65_535;

    private static final Path STATUS = Path.of("/proc/self/status");

    private CpuList()
    {
    }

    /**
     * Parses a CPU list as Linux writes it.
     *
     * @param list the list; blank for none.
     * @return the CPUs.
     * @throws NumberFormatException when a part is not a CPU number or a range of them, or names a CPU above
     *                               {@link #MAX_CPU}.
     */
    public static TreeSet<Integer> parse(final String list)
    {
        final TreeSet<Integer> cpus = new TreeSet<>();
        for (final String part : list.trim().split(","))
        {
            if (part.isEmpty())
            {
                continue;
            }
            final int dash = part.indexOf('-');
            final int first = Integer.parseInt(dash < 0 ? part : part.substring(0, dash));
            final int last = dash < 0 ? first : Integer.parseInt(part.substring(dash + 1));
            if (first < 0 || last > MAX_CPU)
            {
                throw new NumberFormatException("CPU " + (first < 0 ? first : last) + " in '" + part +
                    "' is outside 0-" + MAX_CPU);
            }
            for (int c = first; c <= last; c++)
            {
                cpus.add(c);
            }
        }
        return cpus;
    }

    /**
     * A CPU set in Linux's list format, runs joined by dashes.
     *
     * @param cpus the CPUs.
     * @return the list; empty for none.
     */
    public static String format(final TreeSet<Integer> cpus)
    {
        final List<String> runs = new ArrayList<>();
        int start = -1;
        int previous = -1;
        for (final int c : cpus)
        {
            if (start >= 0 && c == previous + 1)
            {
                previous = c;
                continue;
            }
            if (start >= 0)
            {
                runs.add(start == previous ? Integer.toString(start) : start + "-" + previous);
            }
            start = c;
            previous = c;
        }
        if (start >= 0)
        {
            runs.add(start == previous ? Integer.toString(start) : start + "-" + previous);
        }
        return String.join(",", runs);
    }

    /**
     * The CPUs this process may run on.
     *
     * @return them, from {@code Cpus_allowed_list} of {@code /proc/self/status}.
     * @throws IOException when it cannot be read (not Linux).
     */
    public static TreeSet<Integer> allowed() throws IOException
    {
        for (final String line : Files.readAllLines(STATUS))
        {
            if (line.startsWith("Cpus_allowed_list:"))
            {
                return parse(line.substring(line.indexOf(':') + 1));
            }
        }
        throw new IOException(STATUS + " has no Cpus_allowed_list");
    }

    /**
     * The CPUs this process may run on, for a rank to publish.
     *
     * @return them in list format, or empty where the system does not say (not Linux).
     */
    public static String allowedOrUnknown()
    {
        try
        {
            return format(allowed());
        }
        catch (final IOException | RuntimeException ex)
        {
            return "";
        }
    }
}
