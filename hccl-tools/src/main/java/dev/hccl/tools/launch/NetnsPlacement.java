package dev.hccl.tools.launch;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code hcclrun --netns}: which Linux network namespace each rank runs in, so that one machine can
 * play a cluster of several nodes (see {@code tools/netns-cluster.sh}).
 *
 * <p>Two forms:
 * <ul>
 *   <li>{@code NAME[,NAME...]}: one namespace per rank, as many names as ranks;</li>
 *   <li>{@code PATTERN:K}: K consecutive ranks per namespace, the namespace of rank r being PATTERN
 *       with its single {@code %d} replaced by r / K ({@code hccl-node%d:2} puts ranks 0, 1 in
 *       {@code hccl-node0}, ranks 2, 3 in {@code hccl-node1}, ...). When K does not divide the number
 *       of ranks, the last namespace gets fewer.</li>
 * </ul>
 */
final class NetnsPlacement
{
    /** The iproute2 tool that enters a namespace and looks up its addresses. */
    static final String IP = "ip";

    /** How long looking up rank 0's address may take; {@code ip} answers in milliseconds. */
    static final long LOOKUP_TIMEOUT_SECONDS = 10;

    // What ip netns accepts is any file name; this keeps names that need no quoting anywhere.
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]+");

    private static final Pattern PER_NODE = Pattern.compile("(.*):([0-9]+)");

    // "2: eth0    inet 10.77.0.1/24 brd ... scope global eth0 ...", one line per address (ip -o).
    private static final Pattern INET = Pattern.compile("\\binet\\s+([0-9.]+)/[0-9]+");

    private NetnsPlacement()
    {
    }

    /**
     * Parses a {@code --netns} value.
     *
     * @param spec  the value, in one of the two forms of the class comment
     * @param ranks the number of ranks (&gt;= 1)
     * @return the namespace of each rank, {@code ranks} entries
     * @throws IllegalArgumentException naming what is wrong with {@code spec}
     */
    static List<String> parse(final String spec, final int ranks)
    {
        final Matcher perNode = PER_NODE.matcher(spec);
        if (perNode.matches())
        {
            return perNode(perNode.group(1), perNode.group(2), ranks);
        }
        final List<String> names = Arrays.asList(spec.split(",", -1));
        for (final String name : names)
        {
            requireName(name, spec);
        }
        if (names.size() != ranks)
        {
            throw new IllegalArgumentException("--netns lists " + names.size() + " namespace(s) for " + ranks
                    + " ranks; give one per rank, or PATTERN:K for K ranks per namespace");
        }
        return List.copyOf(names);
    }

    private static List<String> perNode(final String pattern, final String perNodeText, final int ranks)
    {
        final int perNode;
        try
        {
            perNode = Integer.parseInt(perNodeText);
        }
        catch (final NumberFormatException e)
        {
            throw new IllegalArgumentException("--netns ranks per namespace is too large: " + perNodeText, e);
        }
        if (perNode < 1)
        {
            throw new IllegalArgumentException("--netns ranks per namespace must be at least 1, not " + perNode);
        }
        final int at = pattern.indexOf("%d");
        if (at < 0 || pattern.indexOf('%', at + 2) >= 0 || pattern.substring(0, at).indexOf('%') >= 0)
        {
            throw new IllegalArgumentException("--netns pattern '" + pattern
                    + "' must contain %d exactly once and no other %, as in hccl-node%d:2");
        }
        final List<String> names = new ArrayList<>(ranks);
        for (int rank = 0; rank < ranks; rank++)
        {
            final String name = pattern.substring(0, at) + (rank / perNode) + pattern.substring(at + 2);
            requireName(name, pattern + ":" + perNodeText);
            names.add(name);
        }
        return List.copyOf(names);
    }

    private static void requireName(final String name, final String spec)
    {
        if (!NAME.matcher(name).matches() || name.equals(".") || name.equals(".."))
        {
            throw new IllegalArgumentException("--netns '" + spec + "': '" + name
                    + "' is not a namespace name (letters, digits, '.', '_', '-')");
        }
    }

    /**
     * The command that runs {@code command} inside namespace {@code namespace}.
     *
     * @param namespace a namespace name
     * @param command   the program and its arguments
     * @return {@code ip netns exec namespace command...}
     */
    static List<String> wrap(final String namespace, final List<String> command)
    {
        final List<String> wrapped = new ArrayList<>(command.size() + 4);
        wrapped.addAll(List.of(IP, "netns", "exec", namespace));
        wrapped.addAll(command);
        return wrapped;
    }

    /**
     * The first IPv4 address in the output of {@code ip -o -4 addr show}.
     *
     * @param ipOutput what {@code ip} printed
     * @return the address, or {@code null} when there is none
     */
    static String firstIpv4(final String ipOutput)
    {
        final Matcher m = INET.matcher(ipOutput);
        return m.find() ? m.group(1) : null;
    }

    /**
     * The address that ranks in other namespaces reach {@code namespace} at: its first global IPv4
     * address, as {@code ip -n namespace -o -4 addr show scope global} lists them.
     *
     * @param namespace rank 0's namespace
     * @return the address
     * @throws IOException naming the namespace when {@code ip} fails or finds no address
     */
    static String addressOf(final String namespace) throws IOException
    {
        final List<String> command = List.of(IP, "-n", namespace, "-o", "-4", "addr", "show", "scope", "global");
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output;
        try
        {
            p.getOutputStream().close();
            output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!p.waitFor(LOOKUP_TIMEOUT_SECONDS, TimeUnit.SECONDS))
            {
                p.destroyForcibly();
                throw new IOException(String.join(" ", command) + " did not finish");
            }
        }
        catch (final InterruptedException e)
        {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while running " + String.join(" ", command), e);
        }
        if (p.exitValue() != 0)
        {
            throw new IOException(String.join(" ", command) + " failed (status " + p.exitValue() + "): " + output);
        }
        final String address = firstIpv4(output);
        if (address == null)
        {
            throw new IOException("namespace " + namespace + " has no global IPv4 address");
        }
        return address;
    }
}
