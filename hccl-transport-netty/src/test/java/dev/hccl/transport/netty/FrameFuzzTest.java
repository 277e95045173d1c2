package dev.hccl.transport.netty;

import dev.hccl.api.testing.FuzzCases;
import dev.hccl.api.testing.QuietLogs;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A seeded fuzzer over the frame decoder ({@link FrameReceiver}): 1,000,000 streams by default (a third in each of
 * the module's three surefire runs), mostly near-valid
 * (valid DATA, ABORT, HEARTBEAT and GOODBYE frames with mutated lengths, types, codes, magic and bytes, cut short,
 * with bytes put in or taken out), some random, each cut into reads at random places, in buffers of several shapes,
 * sometimes with a sink that throws. A receiver reads bytes from any peer that can reach its port, so whatever they
 * are it must not crash, hang or allocate by a length it has not checked; it must deliver the valid frames intact and
 * stop at the first bad one, failing the link once.
 * <p>
 * Each stream goes to a receiver on an {@code EmbeddedChannel}, set up as the transport sets up an accepted
 * connection (a {@link TcpLink} of one {@link TcpConnection}), so a case costs microseconds, not a socket. What it
 * reports is checked against a reference decoder ({@link FrameStreams#expect}), which reads the whole stream at once:
 * <ul>
 *     <li>no exception leaves the receiver, nothing passes it down the pipeline, and every read buffer is released
 *     once;</li>
 *     <li>the messages, aborts, goodbye and failure reported are the reference's, in order, payloads intact (by
 *     CRC), whatever the cuts between reads;</li>
 *     <li>no {@code onMessage} length lies outside {@code [0, maxFrameBytes]}, no sink is given more than its
 *     message declared, and nothing is reported after the link failed or the peer closed
 *     ({@link FuzzInbound});</li>
 *     <li>the connection is closed exactly when the reference says the receiver closes it (a protocol error, a
 *     throwing sink, GOODBYE) or the peer did;</li>
 *     <li>a case allocates at most {@link #ALLOCATION_BOUND_BYTES} beyond its own input on the test's thread: the
 *     receiver itself holds only a header and an ABORT reason of at most 4 KiB, so only a length taken from the wire
 *     unchecked could cost more.</li>
 * </ul>
 * {@value FuzzCases#SEED_PROPERTY}, {@value FuzzCases#ITERATIONS_PROPERTY} and {@value FuzzCases#CASES_PROPERTY}
 * choose other cases ({@link FuzzCases}); every failure names its seed and case.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class FrameFuzzTest
{
    /** Cases of the whole suite; each of the module's three surefire runs takes a third. */
    static final long DEFAULT_ITERATIONS = 1_000_000;
    private static final long DEFAULT_SEED = 0x48434346_0001L;
    /** A receiver's bound on a payload: large, so that an unchecked ABORT length would show as an allocation. */
    private static final int MAX_FRAME_BYTES = 16 << 20;
    /** Far above what a case needs, far below what a length from the wire taken unchecked would cost. */
    private static final long ALLOCATION_BOUND_BYTES = 4 << 20;
    /** Cases run first, unchecked for allocation: loading classes is no case's cost. */
    private static final int WARM_UP_CASES = 200;
    /** Below this many cases, the check that every outcome came up is skipped: a single case proves nothing. */
    private static final long COVERAGE_MIN_CASES = 20_000;

    private static final FuzzInbound INBOUND = new FuzzInbound();
    private static NettyTransport transport;
    private static QuietLogs quiet;

    private final com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
    private final Map<String, Integer> outcomes = new TreeMap<>();

    @BeforeAll
    static void bindTransport()
    {
        // The receiver reports to the transport's inbound; nothing dials this transport.
        transport = NettyTransport.bind(new TcpSettings()
            .rank(0)
            .worldSize(2)
            .jobToken(Cluster.TOKEN)
            .commId(Cluster.COMM_ID)
            .bindAddress(InetAddress.getLoopbackAddress())
            .ioThreads(0)
            .maxFrameBytes(MAX_FRAME_BYTES)
            .inbound(INBOUND));
        quiet = QuietLogs.silence(FrameReceiver.class, TcpLink.class, TcpConnection.class);
    }

    @AfterAll
    static void closeTransport()
    {
        quiet.close();
        transport.close();
    }

    @Test
    void noStreamCrashesHangsOrOverAllocatesAndValidFramesArriveIntact()
    {
        final FuzzCases cases = FuzzCases.fromProperties(DEFAULT_SEED, DEFAULT_ITERATIONS);
        final boolean measureAllocation = threads.isThreadAllocatedMemorySupported() &&
            threads.isThreadAllocatedMemoryEnabled();
        final FuzzCases warmUp = FuzzCases.warmUp(~DEFAULT_SEED, WARM_UP_CASES);
        for (long index = warmUp.first(); index < warmUp.end(); index++)
        {
            runCase(warmUp, index, false);
        }
        outcomes.clear();
        for (long index = cases.first(); index < cases.end(); index++)
        {
            runCase(cases, index, measureAllocation);
        }
        System.out.println("FrameFuzzTest: " + cases.count() + " streams (" + cases.describeRun() + "): " + outcomes);
        if (cases.count() >= COVERAGE_MIN_CASES)
        {
            for (final String outcome : List.of("message", "abort", "peer closed", "open", "lost", "lost mid-message",
                "bad frame magic", "frame length", "ABORT reason", "GOODBYE with", "HEARTBEAT with", "unknown frame",
                "bad operation", "bad data type", "bad reduce op", "sink fault"))
            {
                assertTrue(outcomes.containsKey(outcome), () -> "no stream ended in '" + outcome + "': " + outcomes);
            }
        }
    }

    private void runCase(final FuzzCases cases, final long index, final boolean measureAllocation)
    {
        final SplittableRandom r = cases.random(index);
        final byte[] stream = FrameStreams.generate(r, MAX_FRAME_BYTES);
        final FrameStreams.SinkFault fault = r.nextInt(20) == 0 ?
            new FrameStreams.SinkFault(FrameStreams.FaultPhase.values()[1 + r.nextInt(3)], r.nextInt(3)) :
            FrameStreams.SinkFault.NONE;
        final boolean peerCloses = r.nextBoolean();
        final List<String> expected = FrameStreams.expect(stream, MAX_FRAME_BYTES, fault, peerCloses);
        final boolean receiverCloses = FrameStreams.closesItself(expected);

        INBOUND.reset(MAX_FRAME_BYTES, fault);
        final long allocatedBefore = measureAllocation ? threads.getCurrentThreadAllocatedBytes() : 0;
        final EmbeddedChannel channel = new EmbeddedChannel();
        final TcpLink link = new TcpLink(transport, FrameStreams.PEER, 1);
        final List<ByteBuf> fed = new ArrayList<>();
        try
        {
            final TcpConnection connection = link.attach(0, channel);
            channel.pipeline().addLast(NettyTransport.FRAMES_HANDLER, new FrameReceiver(connection, transport));
            FrameStreams.feed(r, channel, stream, fed);
            if (peerCloses)
            {
                channel.close();
            }
            channel.checkException();
        }
        catch (final Throwable t)
        {
            fail("an exception left the receiver; " + describe(cases, index, stream, fault, peerCloses), t);
        }
        final long allocated = measureAllocation ? threads.getCurrentThreadAllocatedBytes() - allocatedBefore : 0;

        final List<String> actual = INBOUND.events();
        if (!same(expected, actual) || !INBOUND.violations().isEmpty())
        {
            fail("reported " + actual + ", expected " + expected + "; contract broken: " + INBOUND.violations() +
                "; " + describe(cases, index, stream, fault, peerCloses));
        }
        final boolean open = !peerCloses && !receiverCloses;
        if (open != channel.isOpen() || open != (link.terminated().getCount() > 0) ||
            !channel.inboundMessages().isEmpty())
        {
            fail("connection open " + channel.isOpen() + " (terminated " + (0 == link.terminated().getCount()) +
                ", passed on " + channel.inboundMessages().size() + "), expected open " + open + "; " +
                describe(cases, index, stream, fault, peerCloses));
        }
        final String unreleased = FrameStreams.unreleased(fed);
        if (null != unreleased)
        {
            fail(unreleased + "; " + describe(cases, index, stream, fault, peerCloses));
        }
        if (allocated > ALLOCATION_BOUND_BYTES + 16L * stream.length)
        {
            fail(allocated + " bytes allocated for a stream of " + stream.length + "; " +
                describe(cases, index, stream, fault, peerCloses));
        }
        count(expected, open);
    }

    private static boolean same(final List<String> expected, final List<String> actual)
    {
        if (expected.size() != actual.size())
        {
            return false;
        }
        for (int i = 0; i < expected.size(); i++)
        {
            if (!FrameStreams.matches(expected.get(i), actual.get(i)))
            {
                return false;
            }
        }
        return true;
    }

    /** Tallies how streams ended, so that a generator that stops reaching some outcome fails the test. */
    private void count(final List<String> expected, final boolean open)
    {
        for (final String e : expected)
        {
            if (e.startsWith("message") && e.endsWith("complete"))
            {
                outcomes.merge("message", 1, Integer::sum);
            }
            else if (e.startsWith("abort"))
            {
                outcomes.merge("abort", 1, Integer::sum);
            }
        }
        final String last = expected.isEmpty() ? "" : expected.get(expected.size() - 1);
        final String outcome;
        if (open)
        {
            outcome = "open";
        }
        else if (last.equals(FuzzInbound.PEER_CLOSED))
        {
            outcome = FuzzInbound.PEER_CLOSED;
        }
        else if (last.contains("without goodbye"))
        {
            outcome = last.contains("middle") ? "lost mid-message" : "lost";
        }
        else if (last.contains(FrameStreams.SINK_FAULT_MESSAGE))
        {
            outcome = "sink fault";
        }
        else
        {
            final String details = last.substring(last.indexOf(": ") + 2);
            final String[] words = details.split(" ");
            outcome = words.length > 2 ? words[0] + " " + words[1] + (words[0].equals("bad") ? " " + words[2] : "") :
                details;
        }
        outcomes.merge(outcome.replace(" code", ""), 1, Integer::sum);
    }

    private static String describe(
        final FuzzCases cases, final long index, final byte[] stream, final FrameStreams.SinkFault fault,
        final boolean peerCloses)
    {
        return cases.describe(index) + "; " + FrameStreams.describeBytes("stream", stream) + "; sink fault " + fault +
            "; peer closes " + peerCloses;
    }

    @Test
    void theSameSeedGivesTheSameCases()
    {
        final FuzzCases cases = FuzzCases.fromProperties(DEFAULT_SEED, DEFAULT_ITERATIONS);
        final long index = cases.first() + 17;
        assertEquals(ByteBufUtil.hexDump(FrameStreams.generate(cases.random(index), MAX_FRAME_BYTES)),
            ByteBufUtil.hexDump(FrameStreams.generate(cases.random(index), MAX_FRAME_BYTES)));
    }
}
