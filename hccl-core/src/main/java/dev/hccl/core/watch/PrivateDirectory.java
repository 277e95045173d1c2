package dev.hccl.core.watch;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.util.Set;

/**
 * A directory of this process's user alone at a well-known path in a directory that every user writes, such as
 * {@code /tmp}: another user may have created the name first, as a link to where they want us to write or as a
 * directory of their own. So the directory is made owner-only ({@code rwx------}) from its creation on, never chmod-ed
 * after; one that exists already is used only when it is a real directory (a link is never followed), owned by this
 * user, and writable by nobody else. Anything else is {@link Refused}.
 * <p>
 * This relies on the parent being sticky, as {@code /tmp} is: there nobody else can rename or remove the directory once
 * it is ours.
 */
final class PrivateDirectory
{
    /** The permissions of a directory made here: the owner's alone. */
    static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");

    private PrivateDirectory()
    {
    }

    /**
     * The path of a user's own directory under a shared parent: {@code <prefix>-<user name>}, as other tools name
     * theirs, so that two users of one machine do not fight over one name.
     *
     * @param parent the shared directory, such as the temporary directory.
     * @param prefix what the name starts with.
     * @return the path; the user name is the {@code user.name} property, characters other than letters, digits,
     *         {@code .}, {@code _} and {@code -} as {@code _}.
     */
    static Path perUser(final Path parent, final String prefix)
    {
        final String user = System.getProperty("user.name", "");
        return parent.resolve(prefix + "-" + (user.isEmpty() ? "_" : user.replaceAll("[^A-Za-z0-9._-]", "_")));
    }

    /**
     * Makes the directory owner-only, or checks the one that is there.
     *
     * @param dir the directory; its parent must exist.
     * @return {@code dir}.
     * @throws Refused     when {@code dir} exists and is a link, not a directory, another user's, or writable by group
     *                     or others.
     * @throws IOException when it cannot be made or read.
     */
    static Path open(final Path dir) throws IOException
    {
        try
        {
            if (isPosix(dir))
            {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
            }
            else
            {
                Files.createDirectory(dir);
            }
        }
        catch (final FileAlreadyExistsException ex)
        {
            // Also a link, dangling or not: mkdir does not follow it. Checked below like any other existing entry.
        }
        check(dir);
        return dir;
    }

    /**
     * A directory the user named ({@code HCCL_DUMP_DIR}), which may lie in a directory that every user writes, as a
     * shared {@code /shared/dumps} does: checked as {@link #open} checks, except that a link of this user's own is
     * followed (to the directory it names, which must then pass the checks). A link of another user's is refused:
     * it may name where they want us to write. Missing directories are made, owner-only.
     *
     * @param dir the directory.
     * @return {@code dir}.
     * @throws Refused     when it is another user's link, or not this user's directory, or writable by others.
     * @throws IOException when it cannot be made or read.
     */
    static Path openNamed(final Path dir) throws IOException
    {
        if (isPosix(dir) && Files.isSymbolicLink(dir))
        {
            final PosixFileAttributes link =
                Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            final UserPrincipal me = currentUser(dir);
            if (!link.owner().equals(me))
            {
                throw new Refused(dir, link.owner().getName(), "is a symbolic link of another user's (this process " +
                    "runs as " + me.getName() + ")");
            }
            check(dir.toRealPath());
            return dir;
        }
        final Path parent = dir.toAbsolutePath().getParent();
        if (parent != null && Files.notExists(parent))
        {
            if (isPosix(dir))
            {
                Files.createDirectories(parent, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
            }
            else
            {
                Files.createDirectories(parent);
            }
        }
        return open(dir);
    }

    /** Whether an entry that exists already may be used; the checks also pass a directory just made here. */
    private static void check(final Path dir) throws IOException
    {
        if (!isPosix(dir))
        {
            // No owner or mode to read (Windows, whose temporary directory is the user's own): a real directory does.
            final BasicFileAttributes a =
                Files.readAttributes(dir, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!a.isDirectory())
            {
                throw new Refused(dir, "unknown", a.isSymbolicLink() ? "is a symbolic link" : "is not a directory");
            }
            return;
        }
        final PosixFileAttributes a = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        final String owner = a.owner().getName();
        if (a.isSymbolicLink())
        {
            throw new Refused(dir, owner, "is a symbolic link");
        }
        if (!a.isDirectory())
        {
            throw new Refused(dir, owner, "is not a directory");
        }
        final UserPrincipal me = currentUser(dir);
        if (!a.owner().equals(me))
        {
            throw new Refused(dir, owner, "is another user's (this process runs as " + me.getName() + ")");
        }
        final Set<PosixFilePermission> mode = a.permissions();
        if (mode.contains(PosixFilePermission.GROUP_WRITE) || mode.contains(PosixFilePermission.OTHERS_WRITE))
        {
            throw new Refused(dir, owner, "is writable by others (" + PosixFilePermissions.toString(mode) + ")");
        }
    }

    private static boolean isPosix(final Path dir)
    {
        return dir.getFileSystem().supportedFileAttributeViews().contains("posix");
    }

    /**
     * This process's user: by its name, or, where the name is unknown to the system (a container running an uid
     * without a passwd entry), as the owner of a file made for the purpose.
     */
    private static UserPrincipal currentUser(final Path dir) throws IOException
    {
        try
        {
            return dir.getFileSystem().getUserPrincipalLookupService()
                .lookupPrincipalByName(System.getProperty("user.name", ""));
        }
        catch (final UserPrincipalNotFoundException ex)
        {
            final Path probe = Files.createTempFile("hccl-whoami-", ".tmp");
            try
            {
                return Files.getOwner(probe, LinkOption.NOFOLLOW_LINKS);
            }
            finally
            {
                Files.deleteIfExists(probe);
            }
        }
    }

    /** A directory that is there and not this user's private one: the message names it, what it is and its owner. */
    static final class Refused extends IOException
    {
        private static final long serialVersionUID = 1L;

        /**
         * @param path  the directory refused.
         * @param owner its owner's name.
         * @param what  what is wrong with it, such as {@code is a symbolic link}.
         */
        Refused(final Path path, final String owner, final String what)
        {
            super(path + " " + what + ", owned by " + owner + ": not this user's private directory");
        }
    }
}
