package dev.hccl.tools.launch;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

/**
 * The token {@code hcclrun} made for its job, which nobody else knows, kept where {@code hccl-status --token-file FILE}
 * can read it, so that a job started without a token can still be asked its status: a file only this user may read
 * ({@code rw-------}) in a directory of a fresh, unguessable name that only this user may enter ({@code rwx------}),
 * under {@code $XDG_RUNTIME_DIR} when set (the user's own) or else the JVM's temporary directory. Both are made with
 * those modes, never changed to them after, and both are removed when the launcher exits: by {@link #close}, or by a
 * shutdown hook when it is terminated.
 */
final class PrivateTokenFile implements AutoCloseable
{
    /** The file's name in its directory. */
    static final String NAME = "token";

    private final Path dir;
    private final Path file;
    private final Thread hook = new Thread(this::delete, "hcclrun-token-file");

    private PrivateTokenFile(final Path dir, final Path file)
    {
        this.dir = dir;
        this.file = file;
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /**
     * Writes the token to a new private file.
     *
     * @param token the job's token.
     * @param env   the launcher's environment, for {@code XDG_RUNTIME_DIR}.
     * @return the file, until {@link #close}.
     * @throws IOException when the directory or the file cannot be made or written.
     */
    static PrivateTokenFile keep(final String token, final Map<String, String> env) throws IOException
    {
        final String runtime = env.get("XDG_RUNTIME_DIR");
        final Path parent = runtime != null && !runtime.isBlank() && Files.isDirectory(Path.of(runtime))
            ? Path.of(runtime) : Path.of(System.getProperty("java.io.tmpdir"));
        final Path dir = Files.createTempDirectory(parent, "hcclrun-",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        final Path file = dir.resolve(NAME);
        try
        {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(file, token + "\n", StandardCharsets.UTF_8);
        }
        catch (final IOException | RuntimeException e)
        {
            Files.deleteIfExists(file);
            Files.deleteIfExists(dir);
            throw e;
        }
        return new PrivateTokenFile(dir.toAbsolutePath(), file.toAbsolutePath());
    }

    /**
     * {@link #keep}, or, when the file cannot be made, null after one line on {@code err} saying what that costs: the
     * job runs all the same, only {@code hccl-status} cannot be given its token.
     *
     * @param token the job's token.
     * @param env   the launcher's environment.
     * @param err   where to say that it failed.
     * @return the file, or null.
     */
    static PrivateTokenFile keepOrSay(final String token, final Map<String, String> env, final PrintStream err)
    {
        try
        {
            return keep(token, env);
        }
        catch (final IOException | UnsupportedOperationException e)
        {
            synchronized (err)
            {
                err.println("hcclrun: cannot keep the token it made in a private file for hccl-status (" + e
                    + "); to ask this job's status, give hcclrun the token: HCCL_JOB_TOKEN or --token-file");
                err.flush();
            }
            return null;
        }
    }

    /**
     * @return the file, absolute, to give the ranks as {@code HCCL_JOB_TOKEN_FILE}.
     */
    Path file()
    {
        return file;
    }

    /** Removes the file and its directory, and the shutdown hook that would. */
    @Override
    public void close()
    {
        delete();
        try
        {
            Runtime.getRuntime().removeShutdownHook(hook);
        }
        catch (final IllegalStateException shutdownInProgress)
        {
            // The hook runs or has run: it deletes them too.
        }
    }

    private void delete()
    {
        try
        {
            Files.deleteIfExists(file);
            Files.deleteIfExists(dir);
        }
        catch (final IOException e)
        {
            // Something else was put in the directory: it stays, and with it nothing of ours but its name.
        }
    }
}
