package dev.hccl.api.testing;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The files this process holds open that are gone from their directory, as shared memory is once every rank mapped
 * it: a test reaches them through {@code /proc/self/fd} to damage them as another process of the user's could.
 */
public final class OpenFiles
{
    private OpenFiles()
    {
    }

    /**
     * @param dir   the directory the files were in.
     * @param bytes their size.
     * @return their descriptors in {@code /proc/self/fd}; empty when none.
     * @throws IOException when {@code /proc/self/fd} cannot be listed.
     */
    public static List<Path> deletedOfSize(final Path dir, final long bytes) throws IOException
    {
        final List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd")))
        {
            for (final Path fd : fds)
            {
                try
                {
                    final String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith(dir.toString()) && target.endsWith("(deleted)") && Files.size(fd) == bytes)
                    {
                        found.add(fd);
                    }
                }
                catch (final IOException gone)
                {
                    // a descriptor closed meanwhile, or not a file
                }
            }
        }
        return found;
    }
}
