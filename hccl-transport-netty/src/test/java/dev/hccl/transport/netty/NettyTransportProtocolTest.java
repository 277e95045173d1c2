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
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The frame decoder against hand-made bytes from a raw socket that has passed the handshake as rank 1.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NettyTransportProtocolTest
{
    private static final int MAX_FRAME_BYTES = 1 << 16;

    private final Cluster cluster = new Cluster();
    private final RecordingInbound in0 = new RecordingInbound();
    private NettyTransport t0;
    private Future<?> connect0;

    @AfterEach
    void tearDown()
    {
        cluster.close();
        assertTrue(in0.errors.isEmpty(), in0.errors::toString);
    }

    static Stream<Arguments> malformedHeaders()
    {
        final int ar = Operation.ALL_REDUCE.code();
        final int fp32 = DataType.FP32.code();
        final int sum = ReduceOp.SUM.code();
        return Stream.of(
            Arguments.of("length > maxFrameBytes",
                header(Frames.MAGIC, Frames.TYPE_DATA, ar, fp32, sum, MAX_FRAME_BYTES + 1), "frame length"),
            Arguments.of("negative length", header(Frames.MAGIC, Frames.TYPE_DATA, ar, fp32, sum, -1), "frame length"),
            Arguments.of("bad magic", header(0x12345678, Frames.TYPE_DATA, ar, fp32, sum, 4), "bad frame magic"),
            Arguments.of("unknown type", header(Frames.MAGIC, 9, ar, fp32, sum, 4), "unknown frame type 9"),
            Arguments.of("bad operation", header(Frames.MAGIC, Frames.TYPE_DATA, 200, fp32, sum, 4), "bad operation"),
            Arguments.of("bad data type", header(Frames.MAGIC, Frames.TYPE_DATA, ar, 77, sum, 4), "bad data type"),
            Arguments.of("bad reduce op", header(Frames.MAGIC, Frames.TYPE_DATA, ar, fp32, 66, 4), "bad reduce op"),
            Arguments.of("goodbye with payload", header(Frames.MAGIC, Frames.TYPE_GOODBYE, 0, 0, 0, 4), "GOODBYE"),
            Arguments.of("huge abort",
                header(Frames.MAGIC, Frames.TYPE_ABORT, 0, 0, 0, Frames.ABORT_REASON_MAX_BYTES + 1), "ABORT"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedHeaders")
    void aMalformedHeaderIsAProtocolErrorThatFailsTheLink(
        final String name, final byte[] header, final String expected) throws Exception
    {
        try (Socket s = handshakenRawPeer())
        {
            // A good frame first, so the bad one arrives on a working link.
            writeAll(s.getOutputStream(), frame(1, "ok".getBytes(StandardCharsets.US_ASCII)));
            assertEquals(1, in0.nextMessage().seq());

            writeAll(s.getOutputStream(), header);
            final RecordingInbound.Failure f = in0.nextFailure();
            assertEquals(1, f.peer());
            final HcclException ex = assertInstanceOf(HcclException.class, f.cause());
            assertEquals(ErrorCode.E_TCP_TRANSFER, ex.errorCode());
            assertTrue(ex.getMessage().contains("protocol error from rank 1"), ex.getMessage());
            assertTrue(ex.getMessage().contains(expected), ex.getMessage());
            NettyTransportConnectTest.assertClosedByPeer(s.getInputStream());
            assertTrue(t0.linkOrNull(1).terminated().await(RecordingInbound.WAIT_SECONDS, TimeUnit.SECONDS));
            assertTrue(in0.failures.isEmpty(), "reported more than once");
        }
    }

    @Test
    void framesSplitAtEveryByteAndPackedTogetherAreDecoded() throws Exception
    {
        try (Socket s = handshakenRawPeer())
        {
            final OutputStream out = s.getOutputStream();
            final byte[] a = frame(10, NettyTransportMessagingTest.randomBytes(300, 1));
            final byte[] b = frame(11, new byte[0]);
            final byte[] c = frame(12, NettyTransportMessagingTest.randomBytes(5, 2));
            // Frame 10 one byte per write: the header arrives in pieces.
            for (final byte x : a)
            {
                out.write(x);
                out.flush();
            }
            // Frames 11 and 12 and the first half of 13 in one write, the rest in another.
            final byte[] d = frame(13, NettyTransportMessagingTest.randomBytes(1000, 3));
            final byte[] packed = new byte[b.length + c.length + d.length / 2];
            System.arraycopy(b, 0, packed, 0, b.length);
            System.arraycopy(c, 0, packed, b.length, c.length);
            System.arraycopy(d, 0, packed, b.length + c.length, d.length / 2);
            writeAll(out, packed);
            final byte[] restOfD = new byte[d.length - d.length / 2];
            System.arraycopy(d, d.length / 2, restOfD, 0, restOfD.length);
            writeAll(out, restOfD);

            final RecordingInbound.Message m10 = in0.nextMessage();
            assertEquals(10, m10.seq());
            assertArrayEquals(NettyTransportMessagingTest.randomBytes(300, 1), m10.data());
            assertEquals(11, in0.nextMessage().seq());
            assertArrayEquals(NettyTransportMessagingTest.randomBytes(5, 2), in0.nextMessage().data());
            final RecordingInbound.Message m13 = in0.nextMessage();
            assertEquals(13, m13.seq());
            assertArrayEquals(NettyTransportMessagingTest.randomBytes(1000, 3), m13.data());
            assertTrue(in0.failures.isEmpty());
        }
    }

    @Test
    void framesRightBehindTheProofAreDelivered() throws Exception
    {
        t0 = cluster.bind(Cluster.rawPeerContext(0, 2, in0).maxFrameBytes(MAX_FRAME_BYTES));
        try (Socket s = NettyTransportConnectTest.rawSocket(t0))
        {
            new RawDialer(s, Cluster.TOKEN, 1, 2).handshake(frame(4, "hi".getBytes(StandardCharsets.US_ASCII)));
            assertEquals("hi", new String(in0.nextMessage().data(), StandardCharsets.US_ASCII));
        }
    }

    @Test
    void abortAndGoodbyeFramesFromTheWireReachTheInbound() throws Exception
    {
        try (Socket s = handshakenRawPeer())
        {
            final byte[] reason = "rank 1 saw E_TIMEOUT".getBytes(StandardCharsets.UTF_8);
            final ByteBuf abort = Unpooled.buffer();
            Frames.writeControlHeader(abort, Frames.TYPE_ABORT, 7L, reason.length);
            abort.writeBytes(reason);
            final ByteBuf goodbye = Unpooled.buffer();
            Frames.writeControlHeader(goodbye, Frames.TYPE_GOODBYE, 0L, 0);
            writeAll(s.getOutputStream(), bytes(abort));
            assertEquals("1/7: rank 1 saw E_TIMEOUT", in0.aborts.poll(RecordingInbound.WAIT_SECONDS, TimeUnit.SECONDS));
            writeAll(s.getOutputStream(), bytes(goodbye));
            assertEquals(1, in0.peerClosed.poll(RecordingInbound.WAIT_SECONDS, TimeUnit.SECONDS));
            // On GOODBYE the acceptor closes its side.
            NettyTransportConnectTest.assertClosedByPeer(s.getInputStream());
            assertTrue(t0.linkOrNull(1).terminated().await(RecordingInbound.WAIT_SECONDS, TimeUnit.SECONDS));
            assertTrue(in0.failures.isEmpty(), () -> in0.failures.toString());
        }
    }

    private Socket handshakenRawPeer() throws Exception
    {
        t0 = cluster.bind(Cluster.rawPeerContext(0, 2, in0).maxFrameBytes(MAX_FRAME_BYTES));
        connect0 = cluster.connectAsync(t0, new java.net.InetSocketAddress[]{ t0.listenAddress(), null });
        final Socket s = NettyTransportConnectTest.rawSocket(t0);
        new RawDialer(s, Cluster.TOKEN, 1, 2).handshake(new byte[0]);
        assertNull(Cluster.failureOf(connect0));
        return s;
    }

    private static byte[] frame(final long seq, final byte[] payload)
    {
        final ByteBuf buf = Unpooled.buffer();
        Frames.writeDataHeader(
            buf, Cluster.COMM_ID, seq, 0, new OpDescriptor(Operation.SEND, DataType.UINT8, null, 0, payload.length),
            payload.length);
        buf.writeBytes(payload);
        return bytes(buf);
    }

    private static byte[] header(
        final int magic, final int type, final int op, final int dataType, final int reduceOp, final int length)
    {
        final ByteBuf buf = Unpooled.buffer();
        Frames.writeHeader(buf, type, op, dataType, reduceOp, -1, length, Cluster.COMM_ID, 1, 2, 3);
        buf.setInt(0, magic);
        return bytes(buf);
    }

    private static byte[] bytes(final ByteBuf buf)
    {
        final byte[] bytes = new byte[buf.readableBytes()];
        buf.readBytes(bytes);
        buf.release();
        return bytes;
    }

    private static void writeAll(final OutputStream out, final byte[] bytes) throws IOException
    {
        out.write(bytes);
        out.flush();
    }
}
