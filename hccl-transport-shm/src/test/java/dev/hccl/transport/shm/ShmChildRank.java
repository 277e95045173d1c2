package dev.hccl.transport.shm;

import dev.hccl.api.CommConfig;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.BackoffWait;
import dev.hccl.api.spi.Inbound;
import dev.hccl.api.spi.MessageSink;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.PeerEndpoint;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.TransportContext;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Rank 1 of two, in a process of its own, for {@link ShmCrossProcessTest}: connects to rank 0 through a
 * {@link FileBootstrap}, sends it one message, says so on stdout, and waits to be killed.
 * <p>
 * Arguments: the segment directory, the bootstrap directory.
 */
public final class ShmChildRank
{
    private ShmChildRank()
    {
    }

    /**
     * Runs rank 1.
     *
     * @param args the segment directory and the bootstrap directory.
     * @throws Exception on any failure, which ends the process.
     */
    public static void main(final String[] args) throws Exception
    {
        final Path dir = Path.of(args[0]);
        final FileBootstrap bootstrap = new FileBootstrap(Path.of(args[1]));
        final Inbound ignore = new Inbound()
        {
            @Override
            public MessageSink onMessage(
                final int fromRank, final long commId, final long seq, final long tag, final OpDescriptor desc,
                final int length)
            {
                return new MessageSink()
                {
                    @Override
                    public void write(final ByteBuffer chunk)
                    {
                    }

                    @Override
                    public void complete()
                    {
                    }
                };
            }

            @Override
            public void onLinkFailure(final int peer, final Throwable cause)
            {
            }

            @Override
            public void onPeerClosed(final int peer)
            {
            }

            @Override
            public void onAbort(final int peer, final long commId, final String reason)
            {
            }
        };
        final CommConfig config = CommConfig.builder().environment(Map.of()).worldSize(2).rank(1)
            .set(ShmTransportProvider.DIR, dir.toString()).conclude();
        final ShmTransport t = new ShmTransport(new TransportContext(1, 2, ShmCluster.COMM_ID, "token", ShmCluster.NODE,
            InetAddress.getLoopbackAddress(), config, ignore, bootstrap), dir);
        bootstrap.put("address/1", t.localAddress());
        final byte[] zero = bootstrap.get("address/0", System.nanoTime() + TimeUnit.SECONDS.toNanos(20));
        final Set<Integer> connected = t.connect(new PeerEndpoint(1, ShmCluster.NODE, t.localAddress()),
            List.of(new PeerEndpoint(0, ShmCluster.NODE, zero)), System.nanoTime() + TimeUnit.SECONDS.toNanos(20));
        if (!connected.equals(Set.of(0)))
        {
            throw new IllegalStateException("connected to " + connected);
        }
        final Request r = new Request(0, true, 0);
        t.link(0).send(ShmCluster.COMM_ID, 1, 0,
            new OpDescriptor(Operation.SEND, DataType.INT8, null, 0, 5),
            ByteBuffer.wrap(("pid " + ProcessHandle.current().pid()).getBytes(StandardCharsets.UTF_8)), r);
        final ProgressEngine engine = t.progressEngine();
        if (!r.await(System.nanoTime() + TimeUnit.SECONDS.toNanos(20), engine, BackoffWait.forNode(1, 1)) || null != r.failure())
        {
            throw new IllegalStateException("send failed: " + r.failure());
        }
        System.out.println("sent");
        System.out.flush();
        Thread.sleep(TimeUnit.MINUTES.toMillis(2));
    }
}
