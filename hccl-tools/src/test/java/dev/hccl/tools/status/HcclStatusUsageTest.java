package dev.hccl.tools.status;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * hccl-status's usage errors: the reason and one hint, not the whole usage; and where the token comes from,
 * {@code --token-file} checked as hcclrun checks its own, or {@code HCCL_JOB_TOKEN}. No job answers any of these.
 */
class HcclStatusUsageTest
{
    @TempDir
    Path dir;

    /** What one run printed: its output, its errors and its exit status. */
    record Said(String out, String err, int status)
    {
        List<String> errLines()
        {
            return err.lines().toList();
        }
    }

    static Said status(final Map<String, String> env, final String... args)
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final int status = HcclStatus.run(new PrintWriter(out, true), new PrintWriter(err, true), env, args);
        return new Said(out.toString(), err.toString(), status);
    }

    @Test
    void aMissingAddressIsOneLineAndAHint()
    {
        final Said said = status(Map.of());

        assertEquals(2, said.status(), said.err());
        assertEquals(List.of("hccl-status: Missing required parameter: 'HOST:PORT'",
            "Try 'hccl-status --help' for more information."), said.errLines());
        assertFalse(said.err().contains("Usage:"), said.err());
        assertEquals("", said.out());
    }

    @Test
    void anUnknownOptionGetsPicocliGuess()
    {
        final Said said = status(Map.of(), "--jsn", "127.0.0.1:1");

        assertEquals(2, said.status(), said.err());
        assertEquals(List.of("hccl-status: Unknown option: '--jsn'",
            "Did you mean --json? Try 'hccl-status --help' for more information."), said.errLines());
    }

    @Test
    void withoutATokenItSaysBothWaysToGiveIt()
    {
        final Said said = status(Map.of(), "127.0.0.1:1");

        assertEquals(2, said.status(), said.err());
        assertEquals(List.of("hccl-status: give the job's token: --token-file FILE, the file rank 0's INFO line names, "
            + "or HCCL_JOB_TOKEN, as every rank has it (a job without a token serves no status)",
            "Try 'hccl-status --help' for more information."), said.errLines());
    }

    /** The token file is checked as hcclrun's --token-file is (one code, TokenFile): here, one others can read. */
    @Test
    void aTokenFileOthersCanReadIsRefused() throws Exception
    {
        final Path file = Files.writeString(dir.resolve("token"), "s3cret\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));

        final Said said = status(Map.of("HCCL_JOB_TOKEN", "from-env"), "--token-file", file.toString(), "127.0.0.1:1");

        assertEquals(2, said.status(), said.err());
        assertEquals(List.of("hccl-status: --token-file " + file + " is open to others (rw-r--r--): chmod 600 " + file,
            "Try 'hccl-status --help' for more information."), said.errLines());
    }

    /** A private token file is accepted: the command goes on to ask the job, which is not there. */
    @Test
    void aPrivateTokenFileIsAcceptedWithoutHcclJobToken() throws Exception
    {
        final Path file = Files.writeString(dir.resolve("token"), "s3cret\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));

        final Said said = status(Map.of(), "--token-file", file.toString(), "--timeout", "1", "127.0.0.1:1");

        assertEquals(1, said.status(), said.err());
        assertTrue(said.err().startsWith("hccl-status: ") && !said.err().contains("token"), said.err());
    }

    @Test
    void halfTheTlsFilesIsAUsageErrorOnTheGivenStream()
    {
        final Said said = status(Map.of("HCCL_JOB_TOKEN", "t", "HCCL_TLS_CERT", "/nonexistent/cert"), "127.0.0.1:1");

        assertEquals(2, said.status(), said.err());
        assertEquals(List.of("hccl-status: HCCL_TLS_CERT, HCCL_TLS_KEY and HCCL_TLS_CA go together",
            "Try 'hccl-status --help' for more information."), said.errLines());
    }
}
