package dev.hccl.transport.netty;

import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.DescriptorCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.CRC32;

/**
 * Test support for the frame fuzzers: streams of frames, mostly near-valid (valid frames, then a few mutations), and
 * a reference decoder that says what a receiver must report for a stream, written from the format in {@link Frames}
 * without the receiver's state machine: one pass over the whole stream, so what it expects does not depend on how the
 * stream is cut into reads.
 */
final class FrameStreams
{
    /** The fuzzed peer's rank. */
    static final int PEER = 1;
    /**
     * Written by {@link #expect} where the peer says GOODBYE on one of several connections: the receiver closes the
     * connection and reports nothing. Not an event: {@link #withoutMarkers} takes it out.
     */
    static final String GOODBYE_ON_ONE_CONNECTION = "(goodbye on one connection)";
    /** What a sink fault throws. */
    static final String SINK_FAULT_MESSAGE = "fuzzed sink fault";

    private static final Operation[] OPERATIONS = Operation.values();
    private static final DataType[] DATA_TYPES = DataType.values();
    private static final ReduceOp[] REDUCE_OPS = ReduceOp.values();

    private FrameStreams()
    {
    }

    /** Where a sink throws, to check that a receiver that throws fails the link and delivers nothing more. */
    enum FaultPhase
    {
        NONE, ON_MESSAGE, WRITE, COMPLETE
    }

    /**
     * A sink fault: the {@code message}-th DATA message (from 0) throws in {@code phase}.
     *
     * @param phase   where.
     * @param message which message.
     */
    record SinkFault(FaultPhase phase, int message)
    {
        static final SinkFault NONE = new SinkFault(FaultPhase.NONE, -1);

        boolean at(final FaultPhase p, final int index)
        {
            return phase == p && message == index;
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Generation.

    /**
     * A stream for one case: mostly valid frames with a few mutations, sometimes random bytes.
     *
     * @param r             the case's random source.
     * @param maxFrameBytes the receiver's bound, around which lengths are mutated.
     * @return the bytes.
     */
    static byte[] generate(final SplittableRandom r, final int maxFrameBytes)
    {
        final int pick = r.nextInt(100);
        if (pick < 4)
        {
            return randomBytes(r, r.nextInt(300));
        }
        if (pick < 8)
        {
            // Headers that pass the magic check and little else.
            final ByteArrayOutputStream out = new ByteArrayOutputStream();
            final int headers = 1 + r.nextInt(4);
            for (int i = 0; i < headers; i++)
            {
                final byte[] header = randomBytes(r, Frames.HEADER_LENGTH);
                putInt(header, Frames.MAGIC_OFFSET, Frames.MAGIC);
                out.writeBytes(header);
                out.writeBytes(randomBytes(r, r.nextInt(64)));
            }
            return out.toByteArray();
        }
        return nearValid(r, maxFrameBytes);
    }

    /**
     * Valid frames, then up to three mutations of their headers and of the stream.
     *
     * @param r             the case's random source.
     * @param maxFrameBytes the receiver's bound.
     * @return the bytes.
     */
    static byte[] nearValid(final SplittableRandom r, final int maxFrameBytes)
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final List<Integer> headers = new ArrayList<>();
        final int frames = 1 + r.nextInt(6);
        for (int i = 0; i < frames; i++)
        {
            headers.add(out.size());
            out.writeBytes(validFrame(r, maxFrameBytes));
        }
        byte[] s = out.toByteArray();
        final int mutations = r.nextInt(4);
        for (int m = 0; m < mutations; m++)
        {
            int whole = 0;
            while (whole < headers.size() && headers.get(whole) + Frames.HEADER_LENGTH <= s.length)
            {
                whole++;
            }
            if (0 == whole)
            {
                break; // cut short: no header left to mutate
            }
            final int at = headers.get(r.nextInt(whole));
            switch (r.nextInt(9))
            {
                case 0, 1 -> putInt(s, at + Frames.LENGTH_OFFSET, interestingLength(r, maxFrameBytes,
                    getInt(s, at + Frames.LENGTH_OFFSET)));
                case 2 -> s[at + r.nextInt(Frames.HEADER_LENGTH)] ^= (byte)(1 + r.nextInt(255));
                case 3 -> s[at + Frames.TYPE_OFFSET] = (byte)(r.nextBoolean() ? r.nextInt(6) : r.nextInt(256));
                case 4 -> s[at + Frames.OPERATION_OFFSET + r.nextInt(3)] =
                    (byte)(r.nextBoolean() ? DescriptorCodec.NONE : r.nextInt(256));
                case 5 -> s[at + Frames.MAGIC_OFFSET + r.nextInt(4)] ^= (byte)(1 << r.nextInt(8));
                case 6 -> s = Arrays.copyOf(s, r.nextInt(s.length + 1));
                case 7 -> s = insert(s, r.nextInt(s.length + 1), randomBytes(r, 1 + r.nextInt(16)));
                default -> s = delete(s, r.nextInt(s.length + 1), 1 + r.nextInt(16));
            }
        }
        return s;
    }

    /** One valid frame: mostly DATA, some HEARTBEAT and ABORT, rarely GOODBYE. */
    private static byte[] validFrame(final SplittableRandom r, final int maxFrameBytes)
    {
        final int kind = r.nextInt(100);
        final ByteBuf header = Unpooled.wrappedBuffer(new byte[Frames.HEADER_LENGTH]).writerIndex(0);
        final byte[] payload;
        if (kind < 72)
        {
            payload = randomBytes(r, dataLength(r, maxFrameBytes));
            final DataType dataType = r.nextInt(8) == 0 ? null : DATA_TYPES[r.nextInt(DATA_TYPES.length)];
            final ReduceOp reduceOp = r.nextBoolean() ? null : REDUCE_OPS[r.nextInt(REDUCE_OPS.length)];
            Frames.writeHeader(header, Frames.TYPE_DATA, OPERATIONS[r.nextInt(OPERATIONS.length)].code(),
                DescriptorCodec.code(dataType), DescriptorCodec.code(reduceOp), r.nextBoolean() ? -1 : r.nextInt(),
                payload.length, r.nextLong(), r.nextLong(), r.nextLong(), r.nextLong());
        }
        else if (kind < 86)
        {
            payload = new byte[0];
            Frames.writeControlHeader(header, Frames.TYPE_HEARTBEAT, 0L, 0);
        }
        else if (kind < 97)
        {
            final int length = r.nextInt(25) == 0 ? Frames.ABORT_REASON_MAX_BYTES - r.nextInt(2) : r.nextInt(80);
            payload = r.nextBoolean() ? randomBytes(r, length) : asciiText(r, length);
            Frames.writeControlHeader(header, Frames.TYPE_ABORT, r.nextLong(), payload.length);
        }
        else
        {
            payload = new byte[0];
            Frames.writeControlHeader(header, Frames.TYPE_GOODBYE, 0L, 0);
        }
        final byte[] frame = Arrays.copyOf(header.array(), Frames.HEADER_LENGTH + payload.length);
        System.arraycopy(payload, 0, frame, Frames.HEADER_LENGTH, payload.length);
        return frame;
    }

    private static int dataLength(final SplittableRandom r, final int maxFrameBytes)
    {
        final int pick = r.nextInt(100);
        if (pick < 15)
        {
            return 0;
        }
        if (pick < 88)
        {
            return 1 + r.nextInt(64);
        }
        if (pick < 99)
        {
            return Math.min(maxFrameBytes, 65 + r.nextInt(2048));
        }
        return Math.min(maxFrameBytes, 1 + r.nextInt(32 * 1024));
    }

    /** A payload length a mutation writes: the bounds and their neighbours, signs and extremes, and noise. */
    private static int interestingLength(final SplittableRandom r, final int maxFrameBytes, final int original)
    {
        return switch (r.nextInt(16))
        {
            case 0 -> -1;
            case 1 -> Integer.MIN_VALUE;
            case 2 -> Integer.MAX_VALUE;
            case 3 -> maxFrameBytes;
            case 4 -> maxFrameBytes + 1;
            case 5 -> maxFrameBytes - 1;
            case 6 -> Frames.ABORT_REASON_MAX_BYTES;
            case 7 -> Frames.ABORT_REASON_MAX_BYTES + 1;
            case 8 -> 0;
            case 9 -> original + 1;
            case 10 -> original - 1;
            case 11 -> 1 << (16 + r.nextInt(15));
            case 12 -> r.nextInt(Frames.HEADER_LENGTH * 4);
            case 13 -> r.nextInt(maxFrameBytes + 1);
            default -> r.nextInt();
        };
    }

    /**
     * Random bytes.
     *
     * @param r      the source.
     * @param length how many.
     * @return them.
     */
    static byte[] randomBytes(final SplittableRandom r, final int length)
    {
        final byte[] bytes = new byte[length];
        r.nextBytes(bytes);
        return bytes;
    }

    private static byte[] asciiText(final SplittableRandom r, final int length)
    {
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++)
        {
            bytes[i] = (byte)(' ' + r.nextInt(95));
        }
        return bytes;
    }

    private static byte[] insert(final byte[] s, final int at, final byte[] extra)
    {
        final byte[] out = new byte[s.length + extra.length];
        System.arraycopy(s, 0, out, 0, at);
        System.arraycopy(extra, 0, out, at, extra.length);
        System.arraycopy(s, at, out, at + extra.length, s.length - at);
        return out;
    }

    private static byte[] delete(final byte[] s, final int at, final int length)
    {
        final int n = Math.min(length, s.length - at);
        final byte[] out = new byte[s.length - n];
        System.arraycopy(s, 0, out, 0, at);
        System.arraycopy(s, at + n, out, at, s.length - at - n);
        return out;
    }

    /**
     * Cuts a stream into the pieces that reads deliver: whole, byte by byte, or at random places.
     *
     * @param r the case's random source.
     * @param s the stream.
     * @return the cut positions, ascending, without 0 and the length.
     */
    static int[] cuts(final SplittableRandom r, final byte[] s)
    {
        final int pick = r.nextInt(100);
        if (s.length < 2 || pick < 35)
        {
            return new int[0];
        }
        if (pick < 38 && s.length <= 200)
        {
            final int[] every = new int[s.length - 1];
            Arrays.setAll(every, i -> i + 1);
            return every;
        }
        final int[] some = new int[1 + r.nextInt(Math.min(12, s.length - 1))];
        for (int i = 0; i < some.length; i++)
        {
            some[i] = 1 + r.nextInt(s.length - 1);
        }
        Arrays.sort(some);
        int distinct = 1;
        for (int i = 1; i < some.length; i++)
        {
            if (some[i] != some[distinct - 1])
            {
                some[distinct++] = some[i];
            }
        }
        return Arrays.copyOf(some, distinct);
    }

    /**
     * One read's buffer over {@code s[from, to)}, in one of the shapes a receiver may be given: a heap buffer at an
     * offset in a larger array, or a composite of several (whose payload comes as several NIO buffers). Neither is
     * tracked by the leak detector, so millions cost nothing there.
     *
     * @param r    the case's random source.
     * @param s    the stream.
     * @param from first byte.
     * @param to   one past the last.
     * @return the buffer, owned by the caller.
     */
    static ByteBuf read(final SplittableRandom r, final byte[] s, final int from, final int to)
    {
        final int length = to - from;
        if (length >= 2 && r.nextInt(5) == 0)
        {
            final int split = from + 1 + r.nextInt(length - 1);
            return Unpooled.wrappedBuffer(slack(r, s, from, split), slack(r, s, split, to));
        }
        return slack(r, s, from, to);
    }

    private static ByteBuf slack(final SplittableRandom r, final byte[] s, final int from, final int to)
    {
        final int before = r.nextInt(3) == 0 ? r.nextInt(16) : 0;
        final byte[] array = new byte[before + (to - from) + r.nextInt(4)];
        // Bytes around the read that look like a header: a receiver that reads outside it goes wrong.
        Arrays.fill(array, 0, before, (byte)0x48);
        Arrays.fill(array, before + (to - from), array.length, (byte)0x48);
        System.arraycopy(s, from, array, before, to - from);
        return Unpooled.wrappedBuffer(array, before, to - from);
    }

    /**
     * Writes a stream into a channel in reads cut at random places, as long as the channel is open: a closed
     * connection reads nothing more, as a socket would, and no read is empty.
     *
     * @param r       the case's random source.
     * @param channel the channel.
     * @param s       the stream.
     * @param fed     where every buffer written is added, to check later that each was released.
     */
    static void feed(final SplittableRandom r, final EmbeddedChannel channel, final byte[] s, final List<ByteBuf> fed)
    {
        final int[] cuts = cuts(r, s);
        int from = 0;
        for (int i = 0; i <= cuts.length && from < s.length && channel.isOpen(); i++)
        {
            final int to = i < cuts.length ? cuts[i] : s.length;
            final ByteBuf buf = read(r, s, from, to);
            fed.add(buf);
            channel.writeInbound(buf);
            from = to;
        }
    }

    /**
     * The first buffer written to a receiver that it has not released, or that it released too often.
     *
     * @param fed the buffers written.
     * @return its description, or null when each was released once.
     */
    static String unreleased(final List<ByteBuf> fed)
    {
        for (int i = 0; i < fed.size(); i++)
        {
            if (0 != fed.get(i).refCnt())
            {
                return "read " + i + " of " + fed.size() + " has reference count " + fed.get(i).refCnt();
            }
        }
        return null;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // The reference decoder.

    /**
     * What a receiver must report for a stream, as {@link FuzzInbound} writes it, in order. A failure is written as
     * {@code "failure~"} and a part of its message, or {@code "failure$"} and its end.
     *
     * @param s             the whole stream.
     * @param maxFrameBytes the receiver's bound.
     * @param fault         where the sink throws.
     * @param closedAtEnd   whether the peer closes the connection after the stream.
     * @return the events.
     */
    static List<String> expect(
        final byte[] s, final int maxFrameBytes, final SinkFault fault, final boolean closedAtEnd)
    {
        return expect(s, 0, maxFrameBytes, fault, closedAtEnd, PEER, true);
    }

    /**
     * What a receiver must report for the bytes of a stream from {@code start} on, as {@link FuzzInbound} writes
     * them, in order.
     *
     * @param s                  the stream.
     * @param start              where the frames begin.
     * @param maxFrameBytes      the receiver's bound.
     * @param fault              where the sink throws.
     * @param closedAtEnd        whether the peer closes the connection after the stream.
     * @param peer               the peer's rank.
     * @param goodbyeClosesLink  whether the peer's GOODBYE on this connection closes the link (it does when the pair
     *                           has no other connection).
     * @return the events.
     */
    static List<String> expect(
        final byte[] s, final int start, final int maxFrameBytes, final SinkFault fault, final boolean closedAtEnd,
        final int peer, final boolean goodbyeClosesLink)
    {
        final List<String> events = new ArrayList<>();
        int pos = start;
        int dataIndex = 0;
        while (true)
        {
            if (s.length - pos < Frames.HEADER_LENGTH)
            {
                lost(events, closedAtEnd, pos < s.length);
                return events;
            }
            final int magic = getInt(s, pos + Frames.MAGIC_OFFSET);
            if (Frames.MAGIC != magic)
            {
                events.add(protocolError(peer, "bad frame magic 0x" + Integer.toHexString(magic)));
                return events;
            }
            final int type = s[pos + Frames.TYPE_OFFSET] & 0xFF;
            final int length = getInt(s, pos + Frames.LENGTH_OFFSET);
            if (length < 0 || length > maxFrameBytes)
            {
                events.add(protocolError(peer, "frame length " + length + " outside [0, " + maxFrameBytes + "]"));
                return events;
            }
            final int header = pos;
            final long commId = getLong(s, header + Frames.COMM_ID_OFFSET);
            pos += Frames.HEADER_LENGTH;
            final int available = Math.min(length, s.length - pos);
            switch (type)
            {
                case Frames.TYPE_DATA:
                {
                    final int op = s[header + Frames.OPERATION_OFFSET] & 0xFF;
                    final int dt = s[header + Frames.DATA_TYPE_OFFSET] & 0xFF;
                    final int ro = s[header + Frames.REDUCE_OP_OFFSET] & 0xFF;
                    final String bad = DescriptorCodec.describeBad(op, dt, ro);
                    if (null != bad)
                    {
                        events.add(protocolError(peer, bad));
                        return events;
                    }
                    final int index = dataIndex++;
                    if (fault.at(FaultPhase.ON_MESSAGE, index))
                    {
                        events.add(sinkFault());
                        return events;
                    }
                    final String announced = FuzzInbound.describeMessage(
                        commId, getLong(s, header + Frames.SEQ_OFFSET), getLong(s, header + Frames.TAG_OFFSET),
                        op, dt, ro, getInt(s, header + Frames.ROOT_OFFSET), getLong(s, header + Frames.COUNT_OFFSET),
                        length);
                    if (fault.at(FaultPhase.WRITE, index) && available > 0)
                    {
                        events.add(FuzzInbound.describeDelivery(announced, 0, new CRC32().getValue(), false));
                        events.add(sinkFault());
                        return events;
                    }
                    final CRC32 crc = new CRC32();
                    crc.update(s, pos, available);
                    final boolean whole = available == length;
                    events.add(FuzzInbound.describeDelivery(announced, available, crc.getValue(), whole));
                    if (whole && fault.at(FaultPhase.COMPLETE, index))
                    {
                        events.add(sinkFault());
                        return events;
                    }
                    pos += available;
                    if (!whole)
                    {
                        lost(events, closedAtEnd, true);
                        return events;
                    }
                    break;
                }

                case Frames.TYPE_ABORT:
                    if (length > Frames.ABORT_REASON_MAX_BYTES)
                    {
                        events.add(protocolError(peer, "ABORT reason of " + length + " bytes exceeds " +
                            Frames.ABORT_REASON_MAX_BYTES));
                        return events;
                    }
                    if (available < length)
                    {
                        lost(events, closedAtEnd, true);
                        return events;
                    }
                    events.add(FuzzInbound.describeAbort(commId, new String(s, pos, length, StandardCharsets.UTF_8)));
                    pos += length;
                    break;

                case Frames.TYPE_GOODBYE:
                    if (0 != length)
                    {
                        events.add(protocolError(peer, "GOODBYE with a payload of " + length + " bytes"));
                        return events;
                    }
                    if (goodbyeClosesLink)
                    {
                        events.add(FuzzInbound.PEER_CLOSED);
                    }
                    else
                    {
                        events.add(GOODBYE_ON_ONE_CONNECTION);
                    }
                    return events;

                case Frames.TYPE_HEARTBEAT:
                    if (0 != length)
                    {
                        events.add(protocolError(peer, "HEARTBEAT with a payload of " + length + " bytes"));
                        return events;
                    }
                    break;

                default:
                    events.add(protocolError(peer, "unknown frame type " + type));
                    return events;
            }
        }
    }

    /**
     * Whether the receiver closes the connection itself: after a protocol error, a sink fault or a GOODBYE.
     *
     * @param expected what {@link #expect} said.
     * @return true when the receiver closes.
     */
    static boolean closesItself(final List<String> expected)
    {
        if (expected.isEmpty())
        {
            return false;
        }
        final String last = expected.get(expected.size() - 1);
        return last.startsWith("failure~") || last.equals(FuzzInbound.PEER_CLOSED) ||
            last.equals(GOODBYE_ON_ONE_CONNECTION);
    }

    /**
     * The events {@link #expect} said, without the markers that are no events.
     *
     * @param expected what it said.
     * @return the events a receiver reports.
     */
    static List<String> withoutMarkers(final List<String> expected)
    {
        final List<String> events = new ArrayList<>(expected);
        events.remove(GOODBYE_ON_ONE_CONNECTION);
        return events;
    }

    /**
     * Whether an event as reported matches one as expected.
     *
     * @param expected from {@link #expect}.
     * @param actual   from {@link FuzzInbound}.
     * @return true when they match.
     */
    static boolean matches(final String expected, final String actual)
    {
        if (expected.startsWith("failure~"))
        {
            return actual.startsWith("failure: ") && actual.contains(expected.substring("failure~".length()));
        }
        if (expected.startsWith("failure$"))
        {
            return actual.startsWith("failure: ") && actual.endsWith(expected.substring("failure$".length()));
        }
        return expected.equals(actual);
    }

    private static void lost(final List<String> events, final boolean closedAtEnd, final boolean midMessage)
    {
        if (closedAtEnd)
        {
            events.add("failure$lost: closed by the peer without goodbye" +
                (midMessage ? " in the middle of a message" : ""));
        }
    }

    private static String protocolError(final int peer, final String details)
    {
        return "failure~protocol error from rank " + peer + ": " + details;
    }

    private static String sinkFault()
    {
        return "failure~failed: the receiver threw java.lang.IllegalStateException: " + SINK_FAULT_MESSAGE;
    }

    /**
     * Bytes for a failure message: their length and the first 512 in hexadecimal.
     *
     * @param what  what they are.
     * @param bytes them.
     * @return the words.
     */
    static String describeBytes(final String what, final byte[] bytes)
    {
        final int shown = Math.min(bytes.length, 512);
        return what + " of " + bytes.length + " bytes" + (shown < bytes.length ? ", first " + shown : "") + ": " +
            ByteBufUtil.hexDump(bytes, 0, shown);
    }

    /** The big-endian int at {@code at}. */
    static int getInt(final byte[] s, final int at)
    {
        return ((s[at] & 0xFF) << 24) | ((s[at + 1] & 0xFF) << 16) | ((s[at + 2] & 0xFF) << 8) | (s[at + 3] & 0xFF);
    }

    /** The big-endian long at {@code at}. */
    static long getLong(final byte[] s, final int at)
    {
        return ((long)getInt(s, at) << 32) | (getInt(s, at + 4) & 0xFFFFFFFFL);
    }

    /** Writes a big-endian int at {@code at}. */
    static void putInt(final byte[] s, final int at, final int value)
    {
        s[at] = (byte)(value >>> 24);
        s[at + 1] = (byte)(value >>> 16);
        s[at + 2] = (byte)(value >>> 8);
        s[at + 3] = (byte)value;
    }
}
