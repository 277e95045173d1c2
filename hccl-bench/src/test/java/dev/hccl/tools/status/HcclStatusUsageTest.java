package dev.hccl.tools.status;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** hccl-status's usage errors: the reason and one hint, not the whole usage. Nothing is asked of any job. */
class HcclStatusUsageTest
{
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
    void halfTheTlsFilesIsAUsageErrorOnTheGivenStream()
    {
        final Said said = status(Map.of("HCCL_JOB_TOKEN", "t", "HCCL_TLS_CERT", "/nonexistent/cert"), "127.0.0.1:1");

        assertEquals(2, said.status(), said.err());
        assertEquals(List.of("hccl-status: HCCL_TLS_CERT, HCCL_TLS_KEY and HCCL_TLS_CA go together",
            "Try 'hccl-status --help' for more information."), said.errLines());
    }
}
