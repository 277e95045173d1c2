package dev.hccl.core.topology;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Which node this process runs on: host name + boot id + network namespace. Two processes share a node exactly when
 * they could share memory and loopback: same kernel boot and same network namespace. (Host name alone is not enough:
 * containers and network namespaces on one host are separate nodes to the network.)
 */
public final class NodeIdentity
{
    private NodeIdentity()
    {
    }

    /**
     * This process's node identity.
     *
     * @param override the configured override, or null.
     * @return the identity.
     */
    public static String local(final String override)
    {
        if (override != null)
        {
            return override;
        }
        return hostName() + "/" + readFirstLine(Paths.get("/proc/sys/kernel/random/boot_id")) + "/" + networkNamespace();
    }

    /**
     * The host name, as the kernel reports it.
     *
     * @return the host name.
     */
    public static String hostName()
    {
        final String fromKernel = readFirstLine(Paths.get("/proc/sys/kernel/hostname"));
        if (!fromKernel.isEmpty())
        {
            return fromKernel;
        }
        try
        {
            return InetAddress.getLocalHost().getHostName();
        }
        catch (final IOException ex)
        {
            return "localhost";
        }
    }

    private static String networkNamespace()
    {
        try
        {
            return Files.readSymbolicLink(Paths.get("/proc/self/ns/net")).toString();
        }
        catch (final IOException | UnsupportedOperationException | SecurityException ex)
        {
            return "net:?";
        }
    }

    private static String readFirstLine(final Path path)
    {
        try
        {
            final String text = new String(Files.readAllBytes(path), StandardCharsets.UTF_8).trim();
            final int newline = text.indexOf('\n');
            return newline < 0 ? text : text.substring(0, newline);
        }
        catch (final IOException | SecurityException ex)
        {
            return "";
        }
    }
}
