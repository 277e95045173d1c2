package dev.hccl.tools.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a hidden rank's stream keeps: its last lines, each cut to a bound, however much it writes. */
class HiddenOutputTest
{
    private static List<String> replayed(final HiddenOutput hidden)
    {
        final ByteArrayOutputStream sink = new ByteArrayOutputStream();
        hidden.replay(new PrintStream(sink, true, StandardCharsets.UTF_8), "rank 7");
        return sink.toString(StandardCharsets.UTF_8).lines().toList();
    }

    @Test
    void keepsTheLastLinesEachCutToTheBound()
    {
        final HiddenOutput hidden = new HiddenOutput("stderr");
        final PrintStream in = new PrintStream(hidden, true, StandardCharsets.UTF_8);
        for (int i = 1; i <= 25; i++)
        {
            in.print("line " + i + "\n");
        }
        in.print("x".repeat(HiddenOutput.MAX_LINE_BYTES + 500) + "\n");

        final List<String> expected = new ArrayList<>();
        expected.add("hcclrun: the last lines rank 7 wrote to stderr, hidden by --local-ranks-filter (20 of 26):");
        for (int i = 7; i <= 25; i++)
        {
            expected.add("line " + i);
        }
        expected.add("x".repeat(HiddenOutput.MAX_LINE_BYTES) + " [500 more bytes]");
        assertEquals(expected, replayed(hidden));
    }

    @Test
    void aStreamWithoutALinePrintsNothing()
    {
        assertEquals(List.of(), replayed(new HiddenOutput("stdout")));
    }
}
