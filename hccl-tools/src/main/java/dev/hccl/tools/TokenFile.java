package dev.hccl.tools;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;

/**
 * A job token kept in a file, {@code --token-file} of {@code hcclrun} and of {@code hccl-status}: read only when the
 * file is this user's and no one else may read or write it, since whoever reads it can join the job or ask its status,
 * and whoever writes it chooses the token. One place for both tools, so that they refuse the same files the same way.
 */
public final class TokenFile
{
    /** The most a token file may hold: a token is a secret of a few dozen bytes, not a document. */
    public static final int MAX_BYTES = 4096;

    private static final Set<PosixFilePermission> OTHERS = EnumSet.of(
        PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE,
        PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

    private TokenFile()
    {
    }

    /**
     * Reads a token file, which must be a regular file (a link is not followed), belong to this user, be open to no
     * one else, and hold a token (surrounding white space is not part of it).
     *
     * @param file the file given as {@code --token-file}.
     * @return the token.
     * @throws IllegalArgumentException what is wrong with the file, and what to do about it.
     */
    public static String read(final Path file)
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
                    attributes.owner().getName() + ", not to " + user + ", who runs this: anyone who can change it "
                    + "chooses the job's token");
            }
            final Set<PosixFilePermission> open = EnumSet.copyOf(attributes.permissions());
            open.retainAll(OTHERS);
            if (!open.isEmpty())
            {
                throw new IllegalArgumentException("--token-file " + file + " is open to others (" +
                    PosixFilePermissions.toString(attributes.permissions()) + "): chmod 600 " + file);
            }
            if (attributes.size() > MAX_BYTES)
            {
                throw new IllegalArgumentException("--token-file " + file + " holds " + attributes.size() +
                    " bytes, more than a token (" + MAX_BYTES + " at most)");
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
