package dev.hccl.api;

import java.util.ArrayList;
import java.util.List;

/**
 * Slurm's compressed host lists, as in {@code SLURM_JOB_NODELIST}: names separated by commas, each with any number
 * of bracketed groups of numbers and ranges, expanded in order with their zero padding ({@code node[01-03,07]} is
 * node01, node02, node03, node07; {@code rack[1-2]-n[1-2]} is rack1-n1, rack1-n2, rack2-n1, rack2-n2).
 */
final class SlurmHostlist
{
    /** A list longer than this is refused rather than expanded: a typo must not allocate millions of names. */
    static final int MOST_HOSTS = 1 << 16;

    private SlurmHostlist()
    {
    }

    /**
     * @param hostlist the list, compressed or not.
     * @return the first host: where srun starts task 0.
     * @throws IllegalArgumentException naming the list when it is malformed.
     */
    static String first(final String hostlist)
    {
        return expand(hostlist, 1).get(0);
    }

    /**
     * @param hostlist the list, compressed or not.
     * @param most     stop after this many hosts.
     * @return the hosts, in order, at most {@code most}.
     * @throws IllegalArgumentException naming the list when it is malformed, empty, or longer than
     *                                  {@link #MOST_HOSTS}.
     */
    static List<String> expand(final String hostlist, final int most)
    {
        final List<String> hosts = new ArrayList<>();
        for (final String entry : splitTopLevel(hostlist))
        {
            if (entry.isEmpty())
            {
                throw malformed(hostlist, "an empty name");
            }
            expandEntry(hostlist, entry, 0, "", hosts, Math.min(most, MOST_HOSTS + 1));
            if (hosts.size() >= most)
            {
                break;
            }
        }
        if (hosts.isEmpty())
        {
            throw malformed(hostlist, "no host");
        }
        if (hosts.size() > MOST_HOSTS)
        {
            throw malformed(hostlist, "more than " + MOST_HOSTS + " hosts");
        }
        return hosts.size() > most ? hosts.subList(0, most) : hosts;
    }

    /** Splits at the commas outside brackets. */
    private static List<String> splitTopLevel(final String hostlist)
    {
        final List<String> entries = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < hostlist.length(); i++)
        {
            final char c = hostlist.charAt(i);
            if (c == '[')
            {
                depth++;
            }
            else if (c == ']')
            {
                depth--;
            }
            if (depth < 0 || depth > 1)
            {
                throw malformed(hostlist, "unbalanced brackets");
            }
            if (c == ',' && depth == 0)
            {
                entries.add(hostlist.substring(start, i).trim());
                start = i + 1;
            }
        }
        if (depth != 0)
        {
            throw malformed(hostlist, "an unclosed bracket");
        }
        entries.add(hostlist.substring(start).trim());
        return entries;
    }

    /** Expands {@code entry} from {@code at}, each result prefixed with {@code prefix}, into {@code hosts}. */
    private static void expandEntry(
        final String hostlist, final String entry, final int at, final String prefix, final List<String> hosts,
        final int most)
    {
        final int open = entry.indexOf('[', at);
        if (open < 0)
        {
            hosts.add(prefix + entry.substring(at));
            return;
        }
        final int close = entry.indexOf(']', open);
        final String head = prefix + entry.substring(at, open);
        for (final String range : entry.substring(open + 1, close).split(",", -1))
        {
            final int dash = range.indexOf('-');
            final String low = (dash < 0 ? range : range.substring(0, dash)).trim();
            final String high = (dash < 0 ? range : range.substring(dash + 1)).trim();
            final long from = number(hostlist, low);
            final long to = number(hostlist, high);
            if (to < from)
            {
                throw malformed(hostlist, "the range " + range + " runs backwards");
            }
            for (long n = from; n <= to && hosts.size() < most; n++)
            {
                final String digits = Long.toString(n);
                final String padded = "0".repeat(Math.max(0, low.length() - digits.length())) + digits;
                expandEntry(hostlist, entry, close + 1, head + padded, hosts, most);
            }
        }
    }

    private static long number(final String hostlist, final String digits)
    {
        if (digits.isEmpty() || digits.length() > 18 || !digits.chars().allMatch(Character::isDigit))
        {
            throw malformed(hostlist, "'" + digits + "' is not a number");
        }
        return Long.parseLong(digits);
    }

    private static IllegalArgumentException malformed(final String hostlist, final String why)
    {
        return new IllegalArgumentException("Slurm host list '" + hostlist + "' is malformed: " + why);
    }
}
