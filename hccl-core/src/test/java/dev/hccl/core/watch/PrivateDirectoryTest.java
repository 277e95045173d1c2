package dev.hccl.core.watch;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A directory private to this user at a well-known path of a shared parent: made owner-only, and refused when someone
 * else made the name first (a link, another user's directory, one that others may write).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PrivateDirectoryTest
{
    /** The uid of {@code nobody}: another user. */
    private static final int NOBODY_UID = 65534;

    @TempDir
    Path shared;

    @Test
    void aNewDirectoryIsOwnerOnlyFromItsCreation() throws Exception
    {
        final Path dir = shared.resolve("mine");
        assertEquals(dir, PrivateDirectory.open(dir));
        assertTrue(Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS));
        assertEquals("rwx------", mode(dir));
        // Opened again, the same directory is accepted as it is.
        assertEquals(dir, PrivateDirectory.open(dir));
    }

    @Test
    void aLinkAtThePathIsRefusedAndNotFollowed() throws Exception
    {
        final Path target = Files.createDirectory(shared.resolve("theirs"),
            PosixFilePermissions.asFileAttribute(PrivateDirectory.OWNER_ONLY));
        final Path dir = Files.createSymbolicLink(shared.resolve("mine"), target);
        final PrivateDirectory.Refused ex =
            assertThrows(PrivateDirectory.Refused.class, () -> PrivateDirectory.open(dir));
        assertTrue(ex.getMessage().startsWith(dir + " is a symbolic link, owned by "), ex.getMessage());

        // A dangling link too: mkdir does not create its target.
        final Path dangling = Files.createSymbolicLink(shared.resolve("dangling"), shared.resolve("nowhere"));
        assertThrows(PrivateDirectory.Refused.class, () -> PrivateDirectory.open(dangling));
        assertTrue(Files.notExists(shared.resolve("nowhere")));
    }

    @Test
    void aDirectoryOfAnotherUserIsRefused() throws Exception
    {
        assumeTrue(isRoot(), "giving a directory to another user (uid " + NOBODY_UID + ") needs root; CI runs as root");
        final Path dir = Files.createDirectory(shared.resolve("mine"),
            PosixFilePermissions.asFileAttribute(PrivateDirectory.OWNER_ONLY));
        Files.setAttribute(dir, "unix:uid", NOBODY_UID);
        final String owner = Files.getOwner(dir).getName();
        final PrivateDirectory.Refused ex =
            assertThrows(PrivateDirectory.Refused.class, () -> PrivateDirectory.open(dir));
        assertTrue(ex.getMessage().contains(dir + " is another user's"), ex.getMessage());
        assertTrue(ex.getMessage().contains("owned by " + owner), ex.getMessage());
    }

    @Test
    void aDirectoryThatOthersMayWriteIsRefused() throws Exception
    {
        for (final String mode : new String[] {"rwxrwx---", "rwx-w----", "rwx---rwx", "rwx----w-"})
        {
            final Path dir = Files.createDirectory(shared.resolve("mine-" + mode.replace('-', '_')));
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(mode));
            final PrivateDirectory.Refused ex =
                assertThrows(PrivateDirectory.Refused.class, () -> PrivateDirectory.open(dir), mode);
            assertTrue(ex.getMessage().contains("is writable by others"), ex.getMessage());
        }
        // Readable by others is the owner's choice: accepted.
        final Path readable = Files.createDirectory(shared.resolve("readable"));
        Files.setPosixFilePermissions(readable, PosixFilePermissions.fromString("rwxr-xr-x"));
        assertEquals(readable, PrivateDirectory.open(readable));
    }

    @Test
    void aFileAtThePathIsRefused() throws Exception
    {
        final Path file = Files.writeString(shared.resolve("mine"), "x");
        final PrivateDirectory.Refused ex =
            assertThrows(PrivateDirectory.Refused.class, () -> PrivateDirectory.open(file));
        assertTrue(ex.getMessage().contains("is not a directory"), ex.getMessage());
    }

    @Test
    void theDefaultNameIsPerUser()
    {
        final Path dir = PrivateDirectory.perUser(shared, "hccl-dumps");
        assertEquals(shared.resolve("hccl-dumps-" + System.getProperty("user.name")), dir);
    }

    static String mode(final Path p) throws IOException
    {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
    }

    static boolean isRoot() throws Exception
    {
        final Process p = new ProcessBuilder("id", "-u").redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        return p.waitFor(20, TimeUnit.SECONDS) && "0".equals(out);
    }
}
