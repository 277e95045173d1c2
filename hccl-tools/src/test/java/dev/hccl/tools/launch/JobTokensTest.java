package dev.hccl.tools.launch;

import dev.hccl.tools.TokenFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Where a launch's token comes from: the environment, a file only the user can read, or, on one node, made anew. */
class JobTokensTest
{
    @TempDir
    Path dir;

    private Path file(final String content, final String permissions) throws Exception
    {
        final Path f = dir.resolve("token");
        Files.writeString(f, content);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(permissions));
        return f;
    }

    @Test
    void aFileOnlyTheUserCanReadGivesTheToken() throws Exception
    {
        final JobTokens.Token token = JobTokens.resolve(Map.of("HCCL_JOB_TOKEN", "from-the-environment"),
            file("s3cret-of-16-chars\n", "rw-------"), true);
        assertEquals(new JobTokens.Token("s3cret-of-16-chars", dir.resolve("token").toAbsolutePath(), false), token);
        assertEquals("s3cret-of-16-chars",
            JobTokens.resolve(Map.of(), file("  s3cret-of-16-chars  ", "r--------"), false).value());
    }

    @Test
    void aFileOthersCanReadIsRefusedWithWhatToDo() throws Exception
    {
        for (final String open : new String[] {"rw-r-----", "rw----r--", "rw-----w-", "rw--w----"})
        {
            final Path f = file("s3cret", open);
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> JobTokens.resolve(Map.of(), f, true));
            assertEquals("--token-file " + f + " is open to others (" + open + "): chmod 600 " + f, e.getMessage());
        }
    }

    /** A token a stranger may guess is refused, from a file or the environment, saying how to make one. */
    @Test
    void aShortTokenIsRefusedWithHowToMakeOne() throws Exception
    {
        final Path one = file("x\n", "rw-------");
        assertEquals("the token in --token-file " + one + " has 1 character, which whoever can reach the job's ports "
            + "may guess: use at least 16 random ones (openssl rand -hex 16 > " + one + ")",
            assertThrows(IllegalArgumentException.class, () -> JobTokens.resolve(Map.of(), one, false)).getMessage());
        assertEquals("HCCL_JOB_TOKEN has 15 characters, which whoever can reach the job's ports may guess: use at "
            + "least 16 random ones (export HCCL_JOB_TOKEN=$(openssl rand -hex 16))", assertThrows(
            IllegalArgumentException.class, () -> JobTokens.resolve(Map.of("HCCL_JOB_TOKEN", "x".repeat(15)), null,
            true)).getMessage());
        assertEquals("x".repeat(16), JobTokens.resolve(Map.of("HCCL_JOB_TOKEN", "x".repeat(16)), null, true).value());
    }

    @Test
    void anEmptyOrOversizedFileIsRefused() throws Exception
    {
        final Path empty = file(" \n", "rw-------");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> JobTokens.resolve(Map.of(), empty, true))
            .getMessage().contains("is empty"));
        final Path big = file("x".repeat(TokenFile.MAX_BYTES + 1), "rw-------");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> JobTokens.resolve(Map.of(), big, true))
            .getMessage().contains("more than a token"));
    }

    @Test
    void aLinkIsNotFollowed() throws Exception
    {
        final Path target = file("s3cret", "rw-------");
        final Path link = Files.createSymbolicLink(dir.resolve("link"), target);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> JobTokens.resolve(Map.of(), link, true))
            .getMessage().contains("is not a regular file"));
    }

    @Test
    void severalNodesNeedAGivenTokenOneNodeMakesItsOwn()
    {
        assertEquals(new JobTokens.Token("from-the-environment", null, false),
            JobTokens.resolve(Map.of("HCCL_JOB_TOKEN", "from-the-environment"), null, true));
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> JobTokens.resolve(Map.of(), null, true));
        assertTrue(e.getMessage().startsWith("the launchers of a job of several nodes must give their ranks one "
            + "token"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> JobTokens.resolve(Map.of("HCCL_JOB_TOKEN", " "), null, true));
        final JobTokens.Token made = JobTokens.resolve(Map.of(), null, false);
        assertTrue(made.made() && made.file() == null, made.toString());
        assertEquals(32, made.value().length());
        assertNotEquals(made.value(), JobTokens.resolve(Map.of(), null, false).value());
        assertTrue(JobTokens.resolve(Map.of("HCCL_JOB_TOKEN", " "), null, false).made(), "a blank token is none");
    }
}
