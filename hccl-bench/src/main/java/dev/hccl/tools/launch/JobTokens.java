package dev.hccl.tools.launch;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * Where a launch's job token comes from. Never the command line, which {@code ps} shows every user: the launcher's
 * {@code HCCL_JOB_TOKEN}, or a file ({@code --token-file}) that only its owner, the user who launches, can read. A job
 * of one launcher may make its own ({@link RankEnvironment#jobToken}); the launchers of a job of several nodes must
 * share one, so there it is required.
 */
final class JobTokens
{
    /** The most a token file may hold: a token is a secret of a few dozen bytes, not a document. */
    static final int MAX_FILE_BYTES = 4096;

    private static final Set<PosixFilePermission> OTHERS = EnumSet.of(
        PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE,
        PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

    private JobTokens()
    {
    }

    /**
     * The token of this launch.
     *
     * @param env    the launcher's environment.
     * @param file   {@code --token-file}, or null.
     * @param shared whether other launchers (on other nodes) must give their ranks the same token.
     * @return the token.
     * @throws IllegalArgumentException what is wrong, and what to do.
     */
    static String resolve(final Map<String, String> env, final Path file, final boolean shared)
    {
        if (file != null)
        {
            return read(file);
        }
        final String inherited = env.get("HCCL_JOB_TOKEN");
        if (shared && (inherited == null || inherited.isBlank()))
        {
            throw new IllegalArgumentException("the launchers of a job of several nodes must give their ranks one "
                + "token: set HCCL_JOB_TOKEN to the same secret for every node's hcclrun (openssl rand -hex 16), or "
                + "give --token-file FILE, a file only you can read (chmod 600); never a command-line argument");
        }
        return RankEnvironment.jobToken(env);
    }

    /** Reads a token file, which must belong to this user, be readable by no one else and hold a token. */
    private static String read(final Path file)
    {
        try
        {
            final PosixFileAttributes attributes =
                Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!attributes.isRegularFile())
            {
                throw new IllegalArgumentException("--token-file " + file + " is not a regular file");
            }
            final String user = System.getProperty("user.name");
            if (!attributes.owner().getName().equals(user))
            {
                throw new IllegalArgumentException("--token-file " + file + " belongs to " +
                    attributes.owner().getName() + ", not to " + user + ", who launches: anyone who can change it "
                    + "chooses the job's token");
            }
            final Set<PosixFilePermission> open = EnumSet.copyOf(attributes.permissions());
            open.retainAll(OTHERS);
            if (!open.isEmpty())
            {
                throw new IllegalArgumentException("--token-file " + file + " is open to others (" +
                    PosixFilePermissions.toString(attributes.permissions()) + "): chmod 600 " + file);
            }
            if (attributes.size() > MAX_FILE_BYTES)
            {
                throw new IllegalArgumentException("--token-file " + file + " holds " + attributes.size() +
                    " bytes, more than a token (" + MAX_FILE_BYTES + " at most)");
            }
            final String token = Files.readString(file, StandardCharsets.UTF_8).strip();
            if (token.isEmpty())
            {
                throw new IllegalArgumentException("--token-file " + file + " is empty: write the job's token into "
                    + "it (openssl rand -hex 16 > " + file + ")");
            }
            return token;
        }
        catch (final UnsupportedOperationException ex)
        {
            throw new IllegalArgumentException("--token-file " + file + ": this file system cannot say who may read "
                + "it; use HCCL_JOB_TOKEN", ex);
        }
        catch (final IOException ex)
        {
            throw new IllegalArgumentException("--token-file " + file + " cannot be read: " + ex, ex);
        }
    }
}
