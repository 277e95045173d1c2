package dev.hccl.transport.shm;

import dev.hccl.api.CommConfig;
import dev.hccl.api.spi.Bootstrap;
import dev.hccl.api.spi.Transport;
import dev.hccl.api.spi.TransportContext;
import dev.hccl.api.spi.TransportProvider;
import dev.hccl.api.testing.RecordingInbound;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The plug-in: found by the service loader, off when disabled or when the directory is unusable.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ShmTransportProviderTest
{
    private static final Bootstrap NO_BOOTSTRAP = new MapBootstrap();

    @Test
    void theServiceLoaderFindsIt()
    {
        TransportProvider found = null;
        for (final TransportProvider p : ServiceLoader.load(TransportProvider.class))
        {
            if ("shm".equals(p.name()))
            {
                found = p;
            }
        }
        assertNotNull(found, "no TransportProvider named shm on the class path");
        assertInstanceOf(ShmTransportProvider.class, found);
        assertEquals(200, found.preference());
    }

    @Test
    void opensOnAWritableDirectoryAndPublishesIt(@TempDir final Path dir) throws Exception
    {
        final Transport t = new ShmTransportProvider().open(context(config(dir, false)));
        assertNotNull(t);
        try
        {
            assertEquals("shm", t.name());
            final ShmAddress a = ShmAddress.decode(t.localAddress());
            assertNotNull(a);
            assertEquals(dir.toRealPath().toString(), a.dir());
            assertEquals(ProcessHandle.current().pid(), a.pid());
            assertEquals(ShmAddress.startMillis(ProcessHandle.current()), a.startMillis());
            assertTrue(a.startMillis() > 0, "the JDK should know this process's start");
            assertNotNull(t.progressEngine());
            assertEquals(false, t.progressEngine().wakesOnArrival());
        }
        finally
        {
            t.close();
        }
    }

    @Test
    void offWhenDisabled(@TempDir final Path dir)
    {
        assertNull(new ShmTransportProvider().open(context(config(dir, true))));
        final CommConfig fromEnv = CommConfig.builder()
            .environment(Map.of(ShmTransportProvider.DISABLE.variable(), "1"))
            .worldSize(2).rank(0).set(ShmTransportProvider.DIR, dir.toString()).conclude();
        assertNull(new ShmTransportProvider().open(context(fromEnv)));
    }

    @Test
    void offWhenTheDirectoryIsMissingOrNotADirectory(@TempDir final Path dir) throws Exception
    {
        assertNull(new ShmTransportProvider().open(context(config(dir.resolve("missing"), false))));
        final Path file = Files.createFile(dir.resolve("a-file"));
        assertNull(new ShmTransportProvider().open(context(config(file, false))));
    }

    @Test
    void anAddressSurvivesEncodingAndForeignBytesDoNot()
    {
        final ShmAddress a = new ShmAddress("/dev/shm/é", 1234, 5678);
        assertEquals(a, ShmAddress.decode(a.encode()));
        final byte[] bytes = a.encode();
        bytes[4] = (byte)(ShmAddress.VERSION + 1);
        assertNull(ShmAddress.decode(bytes), "another version");
        final byte[] cut = new byte[bytes.length - 1];
        System.arraycopy(a.encode(), 0, cut, 0, cut.length);
        assertNull(ShmAddress.decode(cut));
        assertNull(ShmAddress.decode(null));
        assertArrayEquals(a.encode(), ShmAddress.decode(a.encode()).encode());
    }

    private static CommConfig config(final Path dir, final boolean disable)
    {
        return CommConfig.builder().environment(Map.of()).worldSize(2).rank(0)
            .set(ShmTransportProvider.DIR, dir.toString())
            .set(ShmTransportProvider.DISABLE, disable).conclude();
    }

    private static TransportContext context(final CommConfig config)
    {
        return new TransportContext(0, 2, 1L, "token", "node", InetAddress.getLoopbackAddress(), config,
            new RecordingInbound(), NO_BOOTSTRAP);
    }
}
