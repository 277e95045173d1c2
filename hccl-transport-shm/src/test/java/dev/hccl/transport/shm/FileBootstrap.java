package dev.hccl.transport.shm;

import dev.hccl.api.spi.Bootstrap;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.locks.LockSupport;

/**
 * A {@link Bootstrap} in a directory, for ranks in different processes: each key a file, written whole by a rename.
 */
final class FileBootstrap implements Bootstrap
{
    private final Path dir;

    FileBootstrap(final Path dir)
    {
        this.dir = dir;
    }

    @Override
    public void put(final String key, final byte[] value)
    {
        try
        {
            final Path tmp = Files.createTempFile(dir, ".put-", ".tmp");
            Files.write(tmp, value);
            Files.move(tmp, file(key), StandardCopyOption.ATOMIC_MOVE);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    @Override
    public byte[] get(final String key, final long deadlineNanos)
    {
        while (true)
        {
            try
            {
                return Files.readAllBytes(file(key));
            }
            catch (final NoSuchFileException ex)
            {
                if (System.nanoTime() - deadlineNanos >= 0)
                {
                    return null;
                }
                LockSupport.parkNanos(2_000_000);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
        }
    }

    @Override
    public long add(final String key, final long delta)
    {
        throw new UnsupportedOperationException("the cross-process tests plant no names"); // no counter is needed
    }

    private Path file(final String key)
    {
        return dir.resolve(key.replace('/', '_'));
    }
}
