package dev.hccl.tools.launch;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Copies one child stream to one launcher stream, line by line, with an optional prefix.
 *
 * <p>Works on bytes, not characters, so that output in any encoding passes through unchanged.
 * Only whole lines are written, each batch under the sink's monitor, so lines of different ranks
 * never interleave within a line. A batch is whatever one read returned: that keeps the number of
 * writes (and flushes) low when a rank logs heavily, while a rank that logs one line at a time
 * still sees it forwarded at once.
 */
final class LinePump implements Runnable
{
    /**
     * A line longer than this is forwarded in pieces, so that a child that never writes a newline
     * (a progress bar using carriage returns) cannot make the launcher run out of memory.
     */
    static final int MAX_LINE_BYTES = 1 << 20;

    private final InputStream in;
    private final PrintStream sink;
    private final byte[] prefix;
    private final ByteArrayOutputStream partial = new ByteArrayOutputStream();
    private final ByteArrayOutputStream batch = new ByteArrayOutputStream();

    /**
     * @param in     the child's stdout or stderr; closed when the pump ends
     * @param sink   where the lines go; all writers to it must synchronize on it
     * @param prefix the text put before each line, empty for none
     */
    LinePump(InputStream in, PrintStream sink, String prefix)
    {
        this.in = in;
        this.sink = sink;
        this.prefix = prefix.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Starts a daemon thread running a pump. Daemon, because a background process of a rank may
     * keep the pipe open after the rank is gone, and that must not keep the launcher alive.
     */
    static Thread start(InputStream in, PrintStream sink, String prefix, String name)
    {
        Thread t = new Thread(new LinePump(in, sink, prefix), name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Override
    public void run()
    {
        byte[] buf = new byte[8192];
        try (InputStream s = in)
        {
            int n;
            while ((n = s.read(buf)) >= 0)
            {
                split(buf, n);
                publish();
            }
        }
        catch (final IOException closed)
        {
            // The pipe went away under us; forward what we have.
        }
        finally
        {
            if (partial.size() > 0)
            {
                // The last line had no newline; terminate it so the next line (of any rank)
                // does not continue it.
                endLine(null, 0, 0);
            }
            publish();
        }
    }

    private void split(byte[] buf, int n)
    {
        int start = 0;
        for (int i = 0; i < n; i++)
        {
            if (buf[i] == '\n')
            {
                endLine(buf, start, i - start);
                start = i + 1;
            }
        }
        partial.write(buf, start, n - start);
        if (partial.size() >= MAX_LINE_BYTES)
        {
            endLine(null, 0, 0);
        }
    }

    private void endLine(byte[] tail, int off, int len)
    {
        batch.writeBytes(prefix);
        batch.writeBytes(partial.toByteArray());
        if (tail != null)
        {
            batch.write(tail, off, len);
        }
        batch.write('\n');
        partial.reset();
    }

    private void publish()
    {
        if (batch.size() == 0)
        {
            return;
        }
        byte[] bytes = batch.toByteArray();
        batch.reset();
        synchronized (sink)
        {
            sink.write(bytes, 0, bytes.length);
            sink.flush();
        }
    }
}
