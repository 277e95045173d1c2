package dev.hccl.api.testing;

import java.io.IOException;
import java.io.OutputStream;

/**
 * Writes to two streams: a test that reads what the library logged to stderr still shows it in its own output.
 */
public final class Tee extends OutputStream
{
    private final OutputStream a;
    private final OutputStream b;

    /**
     * @param a one stream.
     * @param b the other.
     */
    public Tee(final OutputStream a, final OutputStream b)
    {
        this.a = a;
        this.b = b;
    }

    @Override
    public synchronized void write(final int c) throws IOException
    {
        a.write(c);
        b.write(c);
    }

    @Override
    public synchronized void write(final byte[] buf, final int off, final int len) throws IOException
    {
        a.write(buf, off, len);
        b.write(buf, off, len);
    }

    @Override
    public synchronized void flush() throws IOException
    {
        a.flush();
        b.flush();
    }
}
