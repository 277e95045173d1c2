package dev.hccl.tools.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.hccl.tools.TokenFile;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The file that keeps the token hcclrun made: private from its making on, a fresh directory each, gone on close. */
class PrivateTokenFileTest
{
    @TempDir
    Path runtime;

    private static String mode(final Path p) throws Exception
    {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
    }

    @Test
    void theTokenIsInAPrivateFileOfAPrivateDirectoryUntilClosed() throws Exception
    {
        final Path file;
        try (PrivateTokenFile kept = PrivateTokenFile.keep("0123abcd", Map.of("XDG_RUNTIME_DIR", runtime.toString())))
        {
            file = kept.file();
            assertEquals(runtime.toAbsolutePath(), file.getParent().getParent(), "under XDG_RUNTIME_DIR: " + file);
            assertTrue(file.getParent().getFileName().toString().startsWith("hcclrun-"), file.toString());
            assertEquals("rw-------", mode(file));
            assertEquals("rwx------", mode(file.getParent()));
            // hccl-status accepts it as it is.
            assertEquals("0123abcd", TokenFile.read(file));
            try (PrivateTokenFile other = PrivateTokenFile.keep("0123abcd", Map.of("XDG_RUNTIME_DIR",
                runtime.toString())))
            {
                assertNotEquals(file.getParent(), other.file().getParent(), "each launcher its own directory");
            }
        }
        assertFalse(Files.exists(file, LinkOption.NOFOLLOW_LINKS), "the file is removed");
        assertFalse(Files.exists(file.getParent(), LinkOption.NOFOLLOW_LINKS), "its directory is removed");
    }

    @Test
    void withoutXdgRuntimeDirItIsInTheTemporaryDirectory() throws Exception
    {
        try (PrivateTokenFile kept = PrivateTokenFile.keep("t", Map.of()))
        {
            assertEquals(Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath(),
                kept.file().getParent().getParent());
        }
    }

    @Test
    void whenItCannotBeMadeTheLauncherSaysWhatThatCostsAndGoesOn() throws Exception
    {
        final Path notADirectory = Files.writeString(runtime.resolve("file"), "");
        final String tmp = System.getProperty("java.io.tmpdir");
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setProperty("java.io.tmpdir", notADirectory.toString());
        try
        {
            assertNull(PrivateTokenFile.keepOrSay("t", Map.of(), new PrintStream(err, true, StandardCharsets.UTF_8)));
        }
        finally
        {
            System.setProperty("java.io.tmpdir", tmp);
        }
        final String said = err.toString(StandardCharsets.UTF_8);
        assertTrue(said.startsWith("hcclrun: cannot keep the token it made in a private file for hccl-status (")
            && said.strip().endsWith("; to ask this job's status, give hcclrun the token: HCCL_JOB_TOKEN or "
            + "--token-file"), said);
    }
}
