package dev.hccl.tools.trace;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code hccl-trace} on what a user gets wrong: each says in one line on the error stream what is wrong and what to
 * give instead, with exit status 1 and no stack trace.
 */
class HcclTraceTest
{
    @TempDir
    Path tmp;

    private record Result(int status, String out, String err)
    {
    }

    private static Result run(final String... args)
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final int status = HcclTrace.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Result(status, out.toString(), err.toString());
    }

    /** One line on stderr that starts as hccl-trace's errors do and contains every part; nothing on stdout. */
    private static void assertOneLineError(final Result r, final String... parts)
    {
        assertEquals(1, r.status(), r::toString);
        assertEquals("", r.out(), r::toString);
        final List<String> lines = r.err().lines().toList();
        assertEquals(1, lines.size(), r::toString);
        assertTrue(lines.get(0).startsWith("hccl-trace: "), r::toString);
        for (final String part : parts)
        {
            assertTrue(lines.get(0).contains(part), () -> "no '" + part + "' in " + r);
        }
    }

    @Test
    void aMissingDirectorySaysWhatToGive()
    {
        final Path missing = tmp.resolve("no-such-dir");
        assertOneLineError(run(missing.toString()), missing + ": no such file or directory", "HCCL_DUMP_DIR");
    }

    @Test
    void anEmptyDirectorySaysWhereDumpsComeFrom()
    {
        assertOneLineError(run(tmp.toString()), "no dump (hccl-trace-*-r*.json) in [" + tmp + "]", "HCCL_DUMP_DIR");
    }

    @Test
    void aFileThatIsNotADumpIsNamed() throws Exception
    {
        final Path other = Files.writeString(tmp.resolve("other.json"), "{\"format\": \"something else\"}");
        assertOneLineError(run(other.toString()),
            "cannot read " + other + ": " + other + " is not an hccl-trace dump (format hccl-trace/1 or /2)");
    }

    @Test
    void aFileThatIsNotJsonIsNamedInOneLine() throws Exception
    {
        final Path garbage = Files.writeString(tmp.resolve("hccl-trace-1-r0.json"), "xx\nyy\n");
        assertOneLineError(run(tmp.toString()), "cannot read " + garbage + ": ", "Unrecognized token");
    }
}
