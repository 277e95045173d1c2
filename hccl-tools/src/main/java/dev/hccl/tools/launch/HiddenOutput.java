package dev.hccl.tools.launch;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * One stream (stdout or stderr) of a rank whose output {@code --local-ranks-filter} hides: instead of being printed,
 * its lines are kept, the last {@link #MAX_LINES} of them, each cut to {@link #MAX_LINE_BYTES}, so that when the rank
 * fails the launcher can print the end of what it said, which usually holds the reason ({@link #replay}). Memory stays
 * bounded however much the rank writes.
 */
final class HiddenOutput extends OutputStream
{
    /** How many of a stream's last lines are kept. */
    static final int MAX_LINES = 20;

    /** How much of a line is kept; the rest is counted, and the line says how much was cut. */
    static final int MAX_LINE_BYTES = 1000;

    private final String stream;
    private final Deque<byte[]> lines = new ArrayDeque<>(MAX_LINES + 1);
    private final ByteArrayOutputStream line = new ByteArrayOutputStream();
    private long cut;
    private long count;

    /**
     * @param stream which stream of the rank this is, for {@link #replay}'s heading: {@code stdout} or {@code stderr}.
     */
    HiddenOutput(final String stream)
    {
        this.stream = stream;
    }

    @Override
    public synchronized void write(final int b)
    {
        if (b == '\n')
        {
            endLine();
        }
        else if (line.size() < MAX_LINE_BYTES)
        {
            line.write(b);
        }
        else
        {
            cut++;
        }
    }

    @Override
    public synchronized void write(final byte[] b, final int off, final int len)
    {
        for (int i = off; i < off + len; i++)
        {
            write(b[i]);
        }
    }

    private void endLine()
    {
        if (cut > 0)
        {
            line.writeBytes((" [" + cut + " more bytes]").getBytes(StandardCharsets.UTF_8));
        }
        lines.addLast(line.toByteArray());
        if (lines.size() > MAX_LINES)
        {
            lines.removeFirst();
        }
        line.reset();
        cut = 0;
        count++;
    }

    /**
     * Prints the lines kept, under a line that says whose they are and how many of them were written in all; nothing
     * when the stream had no line.
     *
     * @param sink where to print them; all writers to it synchronize on it, as {@link LinePump} does.
     * @param rank whose stream this is, for the heading: {@code rank 3}.
     */
    synchronized void replay(final PrintStream sink, final String rank)
    {
        if (count == 0)
        {
            return;
        }
        synchronized (sink)
        {
            sink.println("hcclrun: the last lines " + rank + " wrote to " + stream
                + ", hidden by --local-ranks-filter (" + lines.size() + " of " + count + "):");
            for (final byte[] l : lines)
            {
                sink.write(l, 0, l.length);
                sink.write('\n');
            }
            sink.flush();
        }
    }
}
