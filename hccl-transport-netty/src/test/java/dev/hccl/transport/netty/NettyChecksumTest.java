package dev.hccl.transport.netty;

import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.testing.RecordingInbound;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code HCCL_CHECKSUM} over TCP: messages of every size arrive whole with the CRC32C after their payload, and a frame
 * whose payload was changed on the way fails the link, naming the sender, the operation and the setting, without the
 * message being completed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NettyChecksumTest
{
    private static final OpDescriptor ALL_REDUCE =
        new OpDescriptor(Operation.ALL_REDUCE, DataType.FP32, ReduceOp.SUM, OpDescriptor.NO_ROOT, 256);

    private final Cluster cluster = new Cluster();
    private final RecordingInbound[] in = new RecordingInbound[2];

    @AfterEach
    void tearDown()
    {
        cluster.close();
        for (final RecordingInbound i : in)
        {
            if (null != i)
            {
                assertTrue(i.errors.isEmpty(), i.errors::toString);
            }
        }
    }

    /** Inline payloads and zero-copy ones, both ways, each followed by its CRC. */
    @ParameterizedTest
    @ValueSource(ints = { 0, 1, 1024, 1025, (1 << 20) + 3 })
    void messagesArriveWholeWithTheirChecksums(final int size) throws Exception
    {
        final NettyTransport[] t = cluster.connected(in, ctx -> ctx.checksum(true));
        final byte[] up = NettyTransportMessagingTest.randomBytes(size, 1);
        final byte[] down = NettyTransportMessagingTest.randomBytes(size, 2);
        Cluster.awaitOk(Cluster.send(t[1], 0, 5, 1, ALL_REDUCE, ByteBuffer.wrap(up)));
        final ByteBuffer direct = ByteBuffer.allocateDirect(size).put(down).flip();
        Cluster.awaitOk(Cluster.send(t[0], 1, 6, 1, ALL_REDUCE, direct));
        assertArrayEquals(up, in[0].nextMessage().data());
        assertArrayEquals(down, in[1].nextMessage().data());
        assertTrue(in[0].failures.isEmpty() && in[1].failures.isEmpty(), () -> in[0].failures + " " + in[1].failures);
    }

    @Test
    void aFrameWhosePayloadWasChangedFailsTheLinkNamingTheSender() throws Exception
    {
        final RecordingInbound in0 = in[0] = new RecordingInbound();
        final NettyTransport t0 = cluster.bind(Cluster.rawPeerContext(0, 2, in0).checksum(true));
        final Future<?> connect0 = cluster.connectAsync(t0, new InetSocketAddress[]{ t0.listenAddress(), null });
        try (Socket s = NettyTransportConnectTest.rawSocket(t0))
        {
            new RawDialer(s, Cluster.TOKEN, 1, 2).handshake(new byte[0]);
            assertNull(Cluster.failureOf(connect0));
            final OutputStream out = s.getOutputStream();

            // A good frame, one byte per write, so that its CRC too arrives in pieces.
            final byte[] good = NettyTransportMessagingTest.randomBytes(300, 3);
            for (final byte b : frame(7, good, false))
            {
                out.write(b);
                out.flush();
            }
            final RecordingInbound.Message m = in0.nextMessage();
            assertEquals(7, m.seq());
            assertArrayEquals(good, m.data());

            // A frame whose payload changed after its CRC was computed.
            out.write(frame(8, NettyTransportMessagingTest.randomBytes(2000, 4), true));
            out.flush();
            final RecordingInbound.Failure f = in0.nextFailure();
            assertEquals(1, f.peer());
            final HcclException ex = assertInstanceOf(HcclException.class, f.cause());
            assertEquals(ErrorCode.E_TCP_TRANSFER, ex.errorCode());
            assertEquals(1, ex.peer());
            assertTrue(ex.getMessage().contains("HCCL_CHECKSUM") &&
                ex.getMessage().contains("a message of allReduce (sequence 8) from rank 1"), ex.getMessage());
            NettyTransportConnectTest.assertClosedByPeer(s.getInputStream());
            assertTrue(in0.messages.isEmpty(), "the changed message was completed");
        }
    }

    /** A DATA frame followed by its payload's CRC32C; with {@code damaged}, one payload bit flipped after it. */
    private static byte[] frame(final long seq, final byte[] payload, final boolean damaged)
    {
        final ByteBuf buf = Unpooled.buffer();
        Frames.writeDataHeader(buf, Cluster.COMM_ID, seq, 0, ALL_REDUCE, payload.length);
        final int crc = Frames.checksum(ByteBuffer.wrap(payload));
        final byte[] sent = payload.clone();
        if (damaged)
        {
            sent[payload.length / 2] ^= 0x01;
        }
        buf.writeBytes(sent);
        buf.writeInt(crc);
        final byte[] bytes = new byte[buf.readableBytes()];
        buf.readBytes(bytes);
        buf.release();
        return bytes;
    }
}
