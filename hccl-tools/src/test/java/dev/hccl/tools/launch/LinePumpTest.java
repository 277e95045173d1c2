package dev.hccl.tools.launch;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class LinePumpTest
{
    private static byte[] pump(byte[] input, String prefix)
    {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (PrintStream ps = new PrintStream(sink, false, StandardCharsets.UTF_8))
        {
            new LinePump(new ByteArrayInputStream(input), ps, prefix).run();
        }
        return sink.toByteArray();
    }

    private static String pump(String input, String prefix)
    {
        return new String(pump(input.getBytes(StandardCharsets.UTF_8), prefix), StandardCharsets.UTF_8);
    }

    @Test
    @Timeout(10)
    void prefixesEveryLineIncludingEmptyAndUnterminatedOnes()
    {
        assertEquals("[3] a\n[3] \n[3] b\r\n[3] c\n", pump("a\n\nb\r\nc", "[3] "));
        assertEquals("", pump("", "[3] "));
        assertEquals("x\ny\n", pump("x\ny\n", ""));
    }

    @Test
    @Timeout(10)
    void passesBytesThroughUnchanged()
    {
        byte[] raw = {'[', (byte) 0xff, (byte) 0xfe, 'z', '\n', (byte) 0xc3};

        assertArrayEquals(new byte[] {'>', ' ', '[', (byte) 0xff, (byte) 0xfe, 'z', '\n', '>', ' ', (byte) 0xc3, '\n'},
                pump(raw, "> "));
    }

    @Test
    @Timeout(10)
    void splitsOverlongLinesInsteadOfBufferingForever()
    {
        int len = LinePump.MAX_LINE_BYTES * 2 + 100;
        byte[] line = new byte[len + 1];
        Arrays.fill(line, (byte) 'x');
        line[len] = '\n';

        String[] pieces = new String(pump(line, "[0] "), StandardCharsets.US_ASCII).split("\n");

        int total = 0;
        for (String p : pieces)
        {
            assertEquals("[0] ", p.substring(0, 4));
            assertEquals(p.length() - 4, p.substring(4).chars().filter(c -> c == 'x').count());
            total += p.length() - 4;
        }
        assertEquals(len, total);
        assertEquals(3, pieces.length);
    }
}
