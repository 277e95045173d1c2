package dev.hccl.transport.netty;

import dev.hccl.api.testing.FuzzCases;
import dev.hccl.api.testing.QuietLogs;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A seeded fuzzer over the TCP handshake (version 3: HELLO with the dialer's nonce, CHALLENGE with the acceptor's,
 * the dialer's proof, ACK with the acceptor's proof or REJECT), from both ends: 120,000 acceptor cases and 120,000
 * dialer cases by default (a third in each of the module's three surefire runs). Anyone who can reach a rank's port
 * speaks to its acceptor, and a dialer may reach a port that is not a rank's, so neither may crash, hang, or trust a
 * side that did not prove the job key.
 * <p>
 * The acceptor ({@link AcceptorHandshake}) is given HELLOs that are random, cut short, or valid with mutated fields
 * (among them a rank of the job set up with another number of connections per pair) and bytes, then, after its
 * CHALLENGE, the right proof, a flipped one, one made with another token, over another nonce or for another acceptor,
 * random bytes or too few; sometimes frames follow the proof. The dialer ({@link DialerHandshake}) is given
 * CHALLENGEs and verdicts that are valid or mutated (magic, version, status, rank, body lengths up to 65,535, bodies
 * cut short, another key's proof, REJECTs). Reads are cut at random places. Each side runs on an
 * {@code EmbeddedChannel} whose clock moves only when the test moves it, under a real transport that sets it up as
 * for a socket. For every case, against a reference written from the wire format in {@link Handshake} and the
 * admission rules of {@link TcpMesh}:
 * <ul>
 *     <li>no exception leaves the handler, and every read buffer is released once;</li>
 *     <li>the replies, the proof and the outcome are the reference's: an ACK (at the dialer, an accepted connection)
 *     only when the bytes in the proof's place are the proof the test makes with the job key, whatever the handler's
 *     own check says; a REJECT gives the reference's reason; garbage closes the connection at once; a connection is
 *     registered in the mesh exactly when accepted;</li>
 *     <li>a handshake that stalls is closed once the clock passes the handshake bound, not left open;</li>
 *     <li>a reply's body length is checked before its body is allocated: the dialer closes on one over 1,024 bytes
 *     instead of waiting for it, and no case allocates more than {@link #ALLOCATION_BOUND_BYTES} beyond its
 *     input;</li>
 *     <li>frames right behind the proof or the ACK reach the receiver as {@link FrameStreams#expect} says.</li>
 * </ul>
 * Each peer is admitted at most once per transport and never with all its connections, so no link completes and the
 * transport's heartbeat thread, which beats complete links only, never touches the test's channels. Whether a HELLO
 * is already connected depends on the cases before it, so the transport is replaced every {@value #EPOCH_CASES}
 * cases, and a failure names the cases to rerun from the last replacement. {@value FuzzCases#SEED_PROPERTY},
 * {@value FuzzCases#ITERATIONS_PROPERTY} and {@value FuzzCases#CASES_PROPERTY} choose other cases
 * ({@link FuzzCases}).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class HandshakeFuzzTest
{
    /** Cases of the whole suite for each side; each of the module's three surefire runs takes a third. */
    static final long DEFAULT_ITERATIONS = 120_000;
    private static final long ACCEPTOR_SEED = 0x4843434C_0003L;
    private static final long DIALER_SEED = 0x4843434C_0103L;
    private static final int WORLD_SIZE = 4096;
    /** Connections per pair, of which the fuzz admits one per peer. */
    private static final int CONNECTIONS = 4;
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(20);
    private static final long HANDSHAKE_BOUND_NANOS =
        Math.min(CONNECT_TIMEOUT.toNanos(), AcceptorHandshake.HANDSHAKE_MAX_NANOS);
    private static final int MAX_FRAME_BYTES = 1 << 20;
    /** Far above what a case needs, far below what a length from the wire taken unchecked could cost. */
    private static final long ALLOCATION_BOUND_BYTES = 4 << 20;
    /** Cases on one transport: fewer than it has peers to admit. */
    private static final int EPOCH_CASES = 2048;
    /** Peers left fresh before a transport is replaced early, should an epoch admit that many. */
    private static final int SPARE_PEERS = 64;
    private static final long COVERAGE_MIN_CASES = 20_000;
    /** Cases run first, unchecked for allocation: loading classes and seeding random sources is no case's cost. */
    private static final int WARM_UP_CASES = 200;
    private static final int ACCEPTOR_RANK = 0;
    private static final int DIALER_RANK = WORLD_SIZE - 1;
    /** Where the fuzzed dialers would dial again; they never do, their deadline having passed. */
    private static final InetSocketAddress NOWHERE = new InetSocketAddress(InetAddress.getLoopbackAddress(), 9);
    private static final Handshake KEY = new Handshake(Cluster.TOKEN);
    private static final Handshake STRANGER = new Handshake("not the job's token");
    /** Replies are read and released by the test: the leak detector need not trace them. */
    private static final ByteBufAllocator REPLIES = new UnpooledByteBufAllocator(false, true);

    private final com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
    private final FuzzInbound inbound = new FuzzInbound();
    private final QuietLogs quiet = QuietLogs.silence(AcceptorHandshake.class, DialerHandshake.class, Dialer.class,
        NettyTransport.class, FrameReceiver.class, TcpLink.class, TcpConnection.class);
    private final Map<String, Integer> outcomes = new TreeMap<>();
    private NettyTransport transport;
    /** Peers given a connection on this transport, and which connection. */
    private final Map<Integer, Integer> admitted = new HashMap<>();
    private final List<Integer> admittedPeers = new ArrayList<>();
    /** The case that found the transport fresh. */
    private long epochStart;

    private enum Proof
    {
        RIGHT, FLIPPED, STRANGER, OTHER_NONCE, OTHER_ACCEPTOR, RANDOM, ZEROS, SHORT
    }

    private enum Verdict
    {
        /** Closed at once, without a reply. */
        CLOSED,
        /** Waiting for bytes that never come: closed when the clock passes the bound. */
        STALLED,
        /** Refused, with a reason. */
        REJECTED,
        /** Accepted: the frame receiver has the connection. */
        ACCEPTED
    }

    @AfterEach
    void closeTransport()
    {
        if (null != transport)
        {
            transport.close();
        }
        quiet.close();
    }

    /** One side's fuzz case: the cases, the case's number, and whether its allocation is checked. */
    @FunctionalInterface
    private interface FuzzCase
    {
        void run(FuzzCases cases, long index, boolean checked) throws Exception;
    }

    /**
     * Warms up on cases of their own (unchecked: the first cases of a JVM load classes), then runs this side's cases
     * and prints how they ended.
     */
    private FuzzCases run(final String side, final long seed, final FuzzCase fuzzCase) throws Exception
    {
        final FuzzCases warmUp = FuzzCases.warmUp(~seed, WARM_UP_CASES);
        for (long index = warmUp.first(); index < warmUp.end(); index++)
        {
            fuzzCase.run(warmUp, index, false);
        }
        outcomes.clear();
        final FuzzCases cases = FuzzCases.fromProperties(seed, DEFAULT_ITERATIONS);
        for (long index = cases.first(); index < cases.end(); index++)
        {
            fuzzCase.run(cases, index, true);
        }
        System.out.println("HandshakeFuzzTest, " + side + ": " + cases.count() + " cases (" + cases.describeRun() +
            "): " + outcomes);
        return cases;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // The acceptor.

    @Test
    void theAcceptorAcksOnlyAProvenHelloAndEndsEveryOtherHandshake() throws Exception
    {
        final FuzzCases cases = run("acceptor", ACCEPTOR_SEED, this::acceptorCase);
        checkCoverage(cases, List.of("closed", "stalled before the challenge", "stalled after the challenge",
            "rejected: protocol version", "rejected: job token mismatch", "rejected: communicator id mismatch",
            "rejected: world size mismatch", "rejected: out of range", "rejected: must not dial",
            "rejected: connection out of range", "rejected: already connected", "rejected: connections to each peer",
            "accepted", "accepted, then frames"));
    }

    private void acceptorCase(final FuzzCases cases, final long index, final boolean checkAllocation)
        throws Exception
    {
        startEpoch(cases, index, ACCEPTOR_RANK);
        final SplittableRandom r = cases.random(index);
        final Proof proof = pickProof(r);
        final byte[] hello = helloBytes(r, Proof.RIGHT == proof);
        final int shape = r.nextInt(100);
        // Cut short, or the HELLO and more at once (whatever follows stands for the proof): no proof is then sent.
        final byte[] first;
        if (shape < 6)
        {
            first = Arrays.copyOf(hello, r.nextInt(Math.min(hello.length, Handshake.HELLO_LENGTH - 1) + 1));
        }
        else
        {
            first = shape < 14 ? concat(hello, FrameStreams.randomBytes(r, r.nextInt(100))) : hello;
        }
        final boolean peerCloses = r.nextBoolean();

        inbound.reset(MAX_FRAME_BYTES, FrameStreams.SinkFault.NONE, helloRank(first));
        final List<ByteBuf> fed = new ArrayList<>();
        final List<byte[]> replies = new ArrayList<>();
        byte[] all = first;
        byte[] rightProof = null;
        boolean stalled = false;
        boolean openBeforeTheClock = false;
        final long allocatedBefore = threads.getCurrentThreadAllocatedBytes();
        final MockTicker clock = Ticker.newMockTicker();
        final EmbeddedChannel channel = handshaking(new AcceptorHandshake(transport), clock);
        try
        {
            FrameStreams.feed(r, channel, first, fed);
            readReplies(channel, replies);
            if (Handshake.HELLO_LENGTH == first.length && 1 == replies.size() && channel.isOpen() &&
                Handshake.STATUS_CHALLENGE == replies.get(0)[6])
            {
                final byte[] nonce = Arrays.copyOfRange(replies.get(0), Handshake.REPLY_FIXED_LENGTH,
                    replies.get(0).length);
                final Handshake.Hello claimed = Handshake.decodeHello(first);
                rightProof = KEY.dialerProof(claimed, ACCEPTOR_RANK, nonce);
                final byte[] second = concat(proofBytes(r, proof, claimed, nonce, rightProof), trailing(r));
                all = concat(first, second);
                FrameStreams.feed(r, channel, second, fed);
                readReplies(channel, replies);
            }
            openBeforeTheClock = channel.isOpen();
            if (channel.isOpen() && null != channel.pipeline().get(AcceptorHandshake.class))
            {
                stalled = true;
                clock.advance(HANDSHAKE_BOUND_NANOS, TimeUnit.NANOSECONDS);
                channel.runScheduledPendingTasks();
                channel.runPendingTasks();
            }
            if (peerCloses)
            {
                channel.close();
            }
            readReplies(channel, replies);
            channel.checkException();
        }
        catch (final Throwable t)
        {
            fail("an exception left the acceptor; " + describe(cases, index, all, proof), t);
        }
        final long allocated = threads.getCurrentThreadAllocatedBytes() - allocatedBefore;

        // Proven when the bytes in the proof's place are the job key's proof, as the test makes it (a proof cut
        // short may be completed by the bytes behind it).
        final int proofEnd = Handshake.HELLO_LENGTH + Handshake.PROOF_LENGTH;
        final boolean proven = null != rightProof && all.length >= proofEnd &&
            Arrays.equals(all, Handshake.HELLO_LENGTH, proofEnd, rightProof, 0, Handshake.PROOF_LENGTH);
        final AcceptorOutcome expected = expectAcceptor(all, proven);
        String problem = checkAcceptor(expected, all, replies, channel, stalled, openBeforeTheClock, proven,
            peerCloses, fed, checkAllocation ? allocated : 0);
        if (null == problem && all.length >= Handshake.HELLO_LENGTH)
        {
            // Registered exactly when accepted: a connection refused leaves nothing behind in the mesh.
            final Handshake.Hello h = Handshake.decodeHello(all);
            final boolean registered = Verdict.ACCEPTED == expected.verdict() ||
                Integer.valueOf(h.connection()).equals(admitted.get(h.rank()));
            if (h.rank() >= 0 && h.rank() < WORLD_SIZE && h.connection() < CONNECTIONS &&
                transport.mesh().connected(h.rank(), h.connection()) != registered)
            {
                problem = "connection " + h.connection() + " of rank " + h.rank() + " registered " +
                    transport.mesh().connected(h.rank(), h.connection());
            }
        }
        if (null != problem)
        {
            fail(problem + "; expected " + expected + "; " + describe(cases, index, all, proof));
        }
        if (Verdict.ACCEPTED == expected.verdict())
        {
            final Handshake.Hello h = Handshake.decodeHello(all);
            admitted.put(h.rank(), h.connection());
            admittedPeers.add(h.rank());
        }
        channel.close(); // nothing stays open between cases
        tally(expected.describe(all.length > Handshake.HELLO_LENGTH + Handshake.PROOF_LENGTH));
    }

    /**
     * What the acceptor must do with a stream.
     *
     * @param challenge whether it answers the HELLO with a CHALLENGE.
     * @param verdict   how the handshake ends.
     * @param reason    what its REJECT says, in part.
     * @param category  the reason in a word or two, for the tally.
     */
    private record AcceptorOutcome(boolean challenge, Verdict verdict, String reason, String category)
    {
        String describe(final boolean frames)
        {
            return switch (verdict)
            {
                case CLOSED -> "closed";
                case STALLED -> challenge ? "stalled after the challenge" : "stalled before the challenge";
                case REJECTED -> "rejected: " + category;
                case ACCEPTED -> frames ? "accepted, then frames" : "accepted";
            };
        }
    }

    /**
     * The reference: what an acceptor does with {@code s}, from the wire format and the admission rules (the proof,
     * then the job's communicator, world size and rank order, the connection's index and count, and a connection not
     * yet admitted).
     */
    private AcceptorOutcome expectAcceptor(final byte[] s, final boolean proven)
    {
        if (s.length >= 4 && Handshake.MAGIC != FrameStreams.getInt(s, 0))
        {
            return new AcceptorOutcome(false, Verdict.CLOSED, null, null);
        }
        if (s.length < Handshake.HELLO_LENGTH)
        {
            return new AcceptorOutcome(false, Verdict.STALLED, null, null);
        }
        final ByteBuffer bb = ByteBuffer.wrap(s, 4, Handshake.HELLO_LENGTH - 4);
        final int version = bb.getShort() & 0xFFFF;
        final long commId = bb.getLong();
        final int rank = bb.getInt();
        final int worldSize = bb.getInt();
        final int connection = bb.getShort() & 0xFFFF;
        final int connections = bb.getShort() & 0xFFFF;
        if (Handshake.VERSION != version)
        {
            return new AcceptorOutcome(false, Verdict.REJECTED, "protocol version " + version, "protocol version");
        }
        if (s.length < Handshake.HELLO_LENGTH + Handshake.PROOF_LENGTH)
        {
            return new AcceptorOutcome(true, Verdict.STALLED, null, null);
        }
        if (!proven)
        {
            return rejected("job token mismatch", "job token mismatch");
        }
        if (Cluster.COMM_ID != commId)
        {
            return rejected("communicator id mismatch", "communicator id mismatch");
        }
        if (WORLD_SIZE != worldSize)
        {
            return rejected("world size mismatch", "world size mismatch");
        }
        if (rank < 0 || rank >= WORLD_SIZE)
        {
            return rejected("rank " + rank + " out of range", "out of range");
        }
        if (rank <= ACCEPTOR_RANK)
        {
            return rejected("rank " + rank + " must not dial", "must not dial");
        }
        if (connections < 1 || connections > TcpSettings.CONNECTIONS_PER_PEER_MAX || connection >= connections)
        {
            return rejected("connection " + connection + " of " + connections + " is out of range",
                "connection out of range");
        }
        if (Integer.valueOf(connection).equals(admitted.get(rank)))
        {
            return rejected("connection " + connection + " of rank " + rank + " is already connected",
                "already connected");
        }
        if (CONNECTIONS != connections)
        {
            return rejected("rank " + rank + " opens " + connections + " connections to each peer",
                "connections to each peer");
        }
        return new AcceptorOutcome(true, Verdict.ACCEPTED, null, null);
    }

    private static AcceptorOutcome rejected(final String reason, final String category)
    {
        return new AcceptorOutcome(true, Verdict.REJECTED, reason, category);
    }

    private String checkAcceptor(
        final AcceptorOutcome expected, final byte[] all, final List<byte[]> replies, final EmbeddedChannel channel,
        final boolean stalled, final boolean openBeforeTheClock, final boolean proven,
        final boolean peerCloses, final List<ByteBuf> fed, final long allocated)
    {
        final String unreleased = FrameStreams.unreleased(fed);
        if (null != unreleased)
        {
            return unreleased;
        }
        for (final byte[] reply : replies)
        {
            final String malformed = malformedReply(reply, ACCEPTOR_RANK);
            if (null != malformed)
            {
                return malformed;
            }
        }
        final List<Byte> statuses = new ArrayList<>();
        replies.forEach(reply -> statuses.add(reply[6]));
        final List<Byte> expectedStatuses = new ArrayList<>();
        if (expected.challenge())
        {
            expectedStatuses.add(Handshake.STATUS_CHALLENGE);
        }
        if (Verdict.REJECTED == expected.verdict())
        {
            expectedStatuses.add(Handshake.STATUS_REJECT);
        }
        if (Verdict.ACCEPTED == expected.verdict())
        {
            expectedStatuses.add(Handshake.STATUS_ACK);
        }
        if (!statuses.equals(expectedStatuses))
        {
            return "replied with statuses " + statuses + ", expected " + expectedStatuses;
        }
        final boolean acked = statuses.contains(Handshake.STATUS_ACK);
        if (acked && !proven)
        {
            return "ACK to a dialer that did not prove the job key";
        }
        if (expected.challenge() && Handshake.CHALLENGE_BODY_LENGTH != body(replies.get(0)).length)
        {
            return "a challenge of " + body(replies.get(0)).length + " bytes";
        }
        if (acked)
        {
            final byte[] nonce = body(replies.get(0));
            if (!KEY.verifyAcceptor(Handshake.decodeHello(all), ACCEPTOR_RANK, nonce, body(replies.get(1))))
            {
                return "the ACK's proof is not the job key's";
            }
        }
        if (Verdict.REJECTED == expected.verdict())
        {
            final String text = new String(body(replies.get(replies.size() - 1)), StandardCharsets.UTF_8);
            if (!text.contains(expected.reason()))
            {
                return "rejected for '" + text + "'";
            }
        }
        final boolean open = Verdict.ACCEPTED == expected.verdict() || Verdict.STALLED == expected.verdict();
        if (open != openBeforeTheClock && Verdict.ACCEPTED != expected.verdict())
        {
            return "open " + openBeforeTheClock + " before the clock passed the handshake bound";
        }
        if (stalled != (Verdict.STALLED == expected.verdict()))
        {
            return "stalled " + stalled;
        }
        if (Verdict.ACCEPTED != expected.verdict() && channel.isOpen())
        {
            return "still open after the clock passed the handshake bound";
        }
        if (Verdict.ACCEPTED == expected.verdict())
        {
            final String frames = checkFrames(all, Handshake.HELLO_LENGTH + Handshake.PROOF_LENGTH,
                Handshake.decodeHello(all).rank(), channel, peerCloses);
            if (null != frames)
            {
                return frames;
            }
        }
        else if (!inbound.events().isEmpty())
        {
            return "reported " + inbound.events() + " on a connection never accepted";
        }
        if (allocated > ALLOCATION_BOUND_BYTES + 16L * all.length)
        {
            return allocated + " bytes allocated";
        }
        return null;
    }

    /** The HELLO of a case: random, or valid with mutated fields and bytes; the rank a fresh peer when it may pass. */
    private byte[] helloBytes(final SplittableRandom r, final boolean proven)
    {
        final int pick = r.nextInt(100);
        if (pick < 4)
        {
            return FrameStreams.randomBytes(r, r.nextInt(90));
        }
        if (pick < 7)
        {
            final byte[] bytes = FrameStreams.randomBytes(r, Handshake.HELLO_LENGTH);
            FrameStreams.putInt(bytes, 0, Handshake.MAGIC);
            return bytes;
        }
        int version = Handshake.VERSION;
        long commId = Cluster.COMM_ID;
        int rank = freshPeer(r, 1, WORLD_SIZE);
        int worldSize = WORLD_SIZE;
        int connection = r.nextInt(CONNECTIONS);
        int connections = CONNECTIONS;
        if (!admittedPeers.isEmpty() && r.nextInt(10) == 0)
        {
            rank = admittedPeers.get(r.nextInt(admittedPeers.size()));
            connection = admitted.get(rank);
        }
        final int mutations = r.nextInt(100) < 65 ? 0 : 1 + r.nextInt(2);
        for (int m = 0; m < mutations; m++)
        {
            switch (r.nextInt(7))
            {
                case 0 -> version = pick(r, 0, 2, 4, 0xFFFF, r.nextInt(0x10000));
                case 1 -> commId = r.nextBoolean() ? Cluster.COMM_ID ^ (1L << r.nextInt(64)) : r.nextLong();
                case 2 -> rank = pick(r, 0, -1, WORLD_SIZE, WORLD_SIZE + 1, Integer.MIN_VALUE, Integer.MAX_VALUE,
                    r.nextInt());
                case 3 -> worldSize = pick(r, WORLD_SIZE - 1, WORLD_SIZE + 1, 0, -1, 1, r.nextInt());
                case 4 -> connection = pick(r, CONNECTIONS, CONNECTIONS + 1, 0xFFFF, r.nextInt(0x10000));
                case 5 -> connections = pick(r, 0, 1, CONNECTIONS - 1, CONNECTIONS + 1, 0xFFFF, r.nextInt(0x10000));
                default ->
                {
                    // A rank of the job set up with another number of connections per pair.
                    connections = 1 + r.nextInt(TcpSettings.CONNECTIONS_PER_PEER_MAX);
                    connection = r.nextInt(connections);
                }
            }
        }
        final byte[] bytes = encodeHello(version, commId, rank, worldSize, connection, connections,
            FrameStreams.randomBytes(r, 16));
        if (r.nextInt(100) < 8)
        {
            final int flips = 1 + r.nextInt(3);
            for (int i = 0; i < flips; i++)
            {
                bytes[r.nextInt(bytes.length)] ^= (byte)(1 + r.nextInt(255));
            }
        }
        if (proven)
        {
            // A peer with a connection already gets no other (its link may have failed since): a HELLO that would
            // pass goes to a fresh peer instead, unless it repeats an admitted connection exactly.
            final AcceptorOutcome outcome = expectAcceptor(concat(bytes, new byte[Handshake.PROOF_LENGTH]), true);
            final Handshake.Hello h = Handshake.decodeHello(bytes);
            if (Verdict.ACCEPTED == outcome.verdict() && admitted.containsKey(h.rank()))
            {
                FrameStreams.putInt(bytes, 14, freshPeer(r, 1, WORLD_SIZE));
            }
        }
        return bytes;
    }

    private static byte[] proofBytes(
        final SplittableRandom r, final Proof proof, final Handshake.Hello hello, final byte[] nonce,
        final byte[] rightProof)
    {
        final byte[] right = rightProof.clone();
        return switch (proof)
        {
            case RIGHT -> right;
            case FLIPPED ->
            {
                right[r.nextInt(right.length)] ^= (byte)(1 << r.nextInt(8));
                yield right;
            }
            case STRANGER -> STRANGER.dialerProof(hello, ACCEPTOR_RANK, nonce);
            case OTHER_NONCE -> KEY.dialerProof(hello, ACCEPTOR_RANK, FrameStreams.randomBytes(r, nonce.length));
            case OTHER_ACCEPTOR -> KEY.dialerProof(hello, ACCEPTOR_RANK + 1, nonce);
            case RANDOM -> FrameStreams.randomBytes(r, Handshake.PROOF_LENGTH);
            case ZEROS -> new byte[Handshake.PROOF_LENGTH];
            case SHORT -> Arrays.copyOf(right, r.nextInt(Handshake.PROOF_LENGTH));
        };
    }

    private static Proof pickProof(final SplittableRandom r)
    {
        final int pick = r.nextInt(100);
        if (pick < 55)
        {
            return Proof.RIGHT;
        }
        return Proof.values()[1 + (pick - 55) % (Proof.values().length - 1)];
    }

    // ---------------------------------------------------------------------------------------------------------------
    // The dialer.

    @Test
    void theDialerTrustsOnlyAProvenAcceptorAndEndsEveryOtherHandshake() throws Exception
    {
        final FuzzCases cases = run("dialer", DIALER_SEED, this::dialerCase);
        checkCoverage(cases, List.of("closed before the challenge", "closed after the challenge",
            "stalled before the challenge", "stalled after the challenge", "accepted", "accepted, then frames",
            "closed after the ACK: already connected"));
    }

    private void dialerCase(final FuzzCases cases, final long index, final boolean checkAllocation) throws Exception
    {
        startEpoch(cases, index, DIALER_RANK);
        final SplittableRandom r = cases.random(index);
        final boolean again = !admittedPeers.isEmpty() && r.nextInt(20) == 0;
        final int peer = again ? admittedPeers.get(r.nextInt(admittedPeers.size())) : freshPeer(r, 0, DIALER_RANK);
        final int connection = again ? admitted.get(peer) : r.nextInt(CONNECTIONS);
        final Proof proof = pickProof(r);
        final boolean eager = r.nextInt(10) == 0;
        final boolean peerCloses = r.nextBoolean();
        final byte[] acceptorNonce = FrameStreams.randomBytes(r, Handshake.CHALLENGE_BODY_LENGTH);

        inbound.reset(MAX_FRAME_BYTES, FrameStreams.SinkFault.NONE, peer);
        final List<ByteBuf> fed = new ArrayList<>();
        final List<byte[]> sent = new ArrayList<>();
        byte[] all = new byte[0];
        Handshake.Hello hello = null;
        boolean stalled = false;
        boolean openBeforeTheClock = false;
        final long allocatedBefore = threads.getCurrentThreadAllocatedBytes();
        // Its deadline has passed: a failed attempt is not dialed again.
        final Dialer dialer = new Dialer(transport, transport.mesh(), peer, connection, NOWHERE, System.nanoTime() - 1);
        final MockTicker clock = Ticker.newMockTicker();
        final EmbeddedChannel channel = handshaking(new DialerHandshake(transport, dialer), clock);
        try
        {
            readReplies(channel, sent);
            if (1 != sent.size() || Handshake.HELLO_LENGTH != sent.get(0).length)
            {
                fail("the dialer sent " + sent.size() + " messages, not a HELLO; " + cases.describe(index, epochStart));
            }
            hello = Handshake.decodeHello(sent.get(0));
            final byte[] verdict = concat(verdictBytes(r, proof, hello, peer, acceptorNonce), trailing(r));
            final byte[] first = eager ? concat(challengeBytes(r, peer, acceptorNonce), verdict) :
                challengeBytes(r, peer, acceptorNonce);
            all = first;
            FrameStreams.feed(r, channel, first, fed);
            readReplies(channel, sent);
            if (!eager && 2 == sent.size() && channel.isOpen())
            {
                all = concat(first, verdict);
                FrameStreams.feed(r, channel, verdict, fed);
                readReplies(channel, sent);
            }
            openBeforeTheClock = channel.isOpen();
            if (channel.isOpen() && null != channel.pipeline().get(DialerHandshake.class))
            {
                stalled = true;
                clock.advance(CONNECT_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS);
                channel.runScheduledPendingTasks();
                channel.runPendingTasks();
            }
            if (peerCloses)
            {
                channel.close();
            }
            readReplies(channel, sent);
            channel.checkException();
        }
        catch (final Throwable t)
        {
            fail("an exception left the dialer; " + describe(cases, index, all, proof), t);
        }
        final long allocated = threads.getCurrentThreadAllocatedBytes() - allocatedBefore;

        final DialerOutcome expected = expectDialer(all, hello, peer, again);
        final boolean accepted = !again && transport.mesh().connected(peer, connection);
        final String problem = checkDialer(expected, all, hello, peer, sent, channel, accepted, stalled,
            openBeforeTheClock, proof, peerCloses, fed, checkAllocation ? allocated : 0);
        if (null != problem)
        {
            fail(problem + "; expected " + expected + "; " + describe(cases, index, all, proof) + "; peer " + peer +
                ", connection " + connection + ", eager " + eager);
        }
        if (Verdict.ACCEPTED == expected.verdict() && !again)
        {
            admitted.put(peer, connection);
            admittedPeers.add(peer);
        }
        channel.close();
        tally(expected.describe());
    }

    /**
     * What the dialer must do with the replies.
     *
     * @param proves           whether it sends its proof.
     * @param nonce            the acceptor's nonce as the CHALLENGE gave it, or null.
     * @param verdict          how the handshake ends.
     * @param alreadyConnected whether an ACK finds the connection registered already (it is then closed).
     * @param framesStart      where frames begin after an ACK, or -1.
     */
    private record DialerOutcome(
        boolean proves, byte[] nonce, Verdict verdict, boolean alreadyConnected, int framesStart)
    {
        @Override
        public String toString()
        {
            return describe() + " (nonce " + (null == nonce ? "none" : ByteBufUtil.hexDump(nonce)) + ", frames from " +
                framesStart + ")";
        }

        String describe()
        {
            final String stage = proves ? " after the challenge" : " before the challenge";
            return switch (verdict)
            {
                case CLOSED, REJECTED -> "closed" + stage;
                case STALLED -> "stalled" + stage;
                case ACCEPTED -> alreadyConnected ? "closed after the ACK: already connected" :
                    framesStart >= 0 ? "accepted, then frames" : "accepted";
            };
        }
    }

    /**
     * The reference: what a dialer does with the replies {@code s}: each is a fixed part and a body of at most 1,024
     * bytes; REJECT ends it; the first must be a CHALLENGE of 16 bytes from the rank dialed, answered with the proof;
     * the second an ACK whose 32 bytes are the acceptor's proof.
     */
    private static DialerOutcome expectDialer(
        final byte[] s, final Handshake.Hello hello, final int peer, final boolean alreadyConnected)
    {
        int pos = 0;
        byte[] nonce = null;
        while (true)
        {
            if (s.length - pos < Handshake.REPLY_FIXED_LENGTH)
            {
                return new DialerOutcome(null != nonce, nonce, Verdict.STALLED, false, -1);
            }
            final ByteBuffer bb = ByteBuffer.wrap(s, pos, Handshake.REPLY_FIXED_LENGTH);
            final int magic = bb.getInt();
            final int version = bb.getShort() & 0xFFFF;
            final byte status = bb.get();
            final int rank = bb.getInt();
            final int bodyLength = bb.getShort() & 0xFFFF;
            if (Handshake.MAGIC != magic || Handshake.VERSION != version || bodyLength > Handshake.REPLY_BODY_MAX)
            {
                return new DialerOutcome(null != nonce, nonce, Verdict.CLOSED, false, -1);
            }
            pos += Handshake.REPLY_FIXED_LENGTH;
            if (s.length - pos < bodyLength)
            {
                return new DialerOutcome(null != nonce, nonce, Verdict.STALLED, false, -1);
            }
            final byte[] body = Arrays.copyOfRange(s, pos, pos + bodyLength);
            pos += bodyLength;
            if (Handshake.STATUS_REJECT == status || peer != rank)
            {
                return new DialerOutcome(null != nonce, nonce, Verdict.REJECTED, false, -1);
            }
            if (null == nonce)
            {
                if (Handshake.STATUS_CHALLENGE != status || Handshake.CHALLENGE_BODY_LENGTH != bodyLength)
                {
                    return new DialerOutcome(false, null, Verdict.REJECTED, false, -1);
                }
                nonce = body;
                continue;
            }
            if (Handshake.STATUS_ACK != status || Handshake.ACK_BODY_LENGTH != bodyLength ||
                !Arrays.equals(KEY.acceptorProof(hello, peer, nonce), body))
            {
                return new DialerOutcome(true, nonce, Verdict.REJECTED, false, -1);
            }
            return new DialerOutcome(true, nonce, Verdict.ACCEPTED, alreadyConnected, pos < s.length ? pos : -1);
        }
    }

    private String checkDialer(
        final DialerOutcome expected, final byte[] all, final Handshake.Hello hello, final int peer,
        final List<byte[]> sent, final EmbeddedChannel channel, final boolean accepted, final boolean stalled,
        final boolean openBeforeTheClock, final Proof proof, final boolean peerCloses, final List<ByteBuf> fed,
        final long allocated)
    {
        final String unreleased = FrameStreams.unreleased(fed);
        if (null != unreleased)
        {
            return unreleased;
        }
        if (Handshake.MAGIC != FrameStreams.getInt(sent.get(0), 0) || Handshake.VERSION != hello.version() ||
            Cluster.COMM_ID != hello.commId() || DIALER_RANK != hello.rank() || WORLD_SIZE != hello.worldSize() ||
            CONNECTIONS != hello.connections())
        {
            return "a HELLO of other fields: " + hello;
        }
        if ((expected.proves() ? 2 : 1) != sent.size())
        {
            return "sent " + (sent.size() - 1) + " proofs";
        }
        if (expected.proves() && !KEY.verifyDialer(hello, peer, expected.nonce(), sent.get(1)))
        {
            return "the dialer's proof is not the job key's";
        }
        if (accepted && Verdict.ACCEPTED != expected.verdict())
        {
            // The reference accepts only an ACK whose body is the proof the test makes with the job key.
            return "accepted an acceptor that did not prove the job key (" + proof + ")";
        }
        if ((Verdict.ACCEPTED == expected.verdict() && !expected.alreadyConnected()) != accepted)
        {
            return "accepted " + accepted;
        }
        final boolean open = Verdict.STALLED == expected.verdict() ||
            (Verdict.ACCEPTED == expected.verdict() && !expected.alreadyConnected());
        if (open != openBeforeTheClock && (!accepted || expected.framesStart() < 0))
        {
            return "open " + openBeforeTheClock + " before the clock passed the handshake bound";
        }
        if (stalled != (Verdict.STALLED == expected.verdict()))
        {
            return "stalled " + stalled;
        }
        if (!accepted && channel.isOpen())
        {
            return "still open after the clock passed the handshake bound";
        }
        if (accepted)
        {
            final String frames = checkFrames(all, expected.framesStart() < 0 ? all.length : expected.framesStart(),
                peer, channel, peerCloses);
            if (null != frames)
            {
                return frames;
            }
        }
        else if (!inbound.events().isEmpty())
        {
            return "reported " + inbound.events() + " on a connection never accepted";
        }
        if (allocated > ALLOCATION_BOUND_BYTES + 16L * all.length)
        {
            return allocated + " bytes allocated";
        }
        return null;
    }

    /** A CHALLENGE, often mutated, sometimes a REJECT or random bytes instead. */
    private static byte[] challengeBytes(final SplittableRandom r, final int peer, final byte[] nonce)
    {
        final int pick = r.nextInt(100);
        if (pick < 4)
        {
            return FrameStreams.randomBytes(r, r.nextInt(60));
        }
        if (pick < 7)
        {
            return reject(peer, r);
        }
        return mutatedReply(r, Handshake.STATUS_CHALLENGE, peer, nonce, 30);
    }

    /** The verdict: an ACK with the right proof, or with a wrong one, or a REJECT, or another reply, often mutated. */
    private static byte[] verdictBytes(
        final SplittableRandom r, final Proof proof, final Handshake.Hello hello, final int peer, final byte[] nonce)
    {
        final int pick = r.nextInt(100);
        if (Proof.RIGHT != proof && pick < 10)
        {
            return r.nextBoolean() ? reject(peer, r) : mutatedReply(r, Handshake.STATUS_CHALLENGE, peer, nonce, 0);
        }
        final byte[] right = KEY.acceptorProof(hello, peer, nonce);
        final byte[] body = switch (proof)
        {
            case RIGHT -> right;
            case FLIPPED ->
            {
                right[r.nextInt(right.length)] ^= (byte)(1 << r.nextInt(8));
                yield right;
            }
            case STRANGER -> STRANGER.acceptorProof(hello, peer, nonce);
            case OTHER_NONCE -> KEY.acceptorProof(hello, peer, FrameStreams.randomBytes(r, nonce.length));
            case OTHER_ACCEPTOR -> KEY.acceptorProof(hello, peer + 1, nonce);
            case RANDOM -> FrameStreams.randomBytes(r, Handshake.ACK_BODY_LENGTH);
            case ZEROS -> new byte[Handshake.ACK_BODY_LENGTH];
            case SHORT -> Arrays.copyOf(right, r.nextInt(Handshake.ACK_BODY_LENGTH));
        };
        // A right proof goes unmutated, or the case would not say whether the dialer may accept.
        return mutatedReply(r, Handshake.STATUS_ACK, peer, body, Proof.RIGHT == proof ? 0 : 30);
    }

    /**
     * A reply, mutated in {@code percent} of cases: its magic, version, status, rank or body length (up to 65,535,
     * with no body behind it), or its body cut short.
     */
    private static byte[] mutatedReply(
        final SplittableRandom r, final byte status, final int peer, final byte[] body, final int percent)
    {
        int magic = Handshake.MAGIC;
        int version = Handshake.VERSION;
        int replyStatus = status;
        int rank = peer;
        int bodyLength = body.length;
        byte[] replyBody = body;
        if (r.nextInt(100) < percent)
        {
            switch (r.nextInt(7))
            {
                case 0 -> magic ^= 1 << r.nextInt(32);
                case 1 -> version = pick(r, 0, 2, 4, 0xFFFF);
                case 2 -> replyStatus = pick(r, Handshake.STATUS_ACK, Handshake.STATUS_CHALLENGE, 3, 0x7F, -1);
                case 3 -> rank = pick(r, peer + 1, peer - 1, -1, Integer.MAX_VALUE, r.nextInt());
                case 4 -> bodyLength = pick(r, Handshake.REPLY_BODY_MAX + 1, 0xFFFF, 1 << 15,
                    Handshake.REPLY_BODY_MAX + 1 + r.nextInt(0xFFFF - Handshake.REPLY_BODY_MAX));
                case 5 -> replyBody = Arrays.copyOf(body, r.nextInt(body.length + 1));
                default ->
                {
                    replyBody = FrameStreams.randomBytes(r, pick(r, 0, Math.max(0, body.length - 1),
                        body.length + 1, r.nextInt(Handshake.REPLY_BODY_MAX + 1)));
                    bodyLength = replyBody.length;
                }
            }
        }
        final ByteBuffer bb = ByteBuffer.allocate(Handshake.REPLY_FIXED_LENGTH + replyBody.length);
        bb.putInt(magic).putShort((short)version).put((byte)replyStatus).putInt(rank).putShort((short)bodyLength);
        return bb.put(replyBody).array();
    }

    /** A REJECT with a reason. */
    private static byte[] reject(final int rank, final SplittableRandom r)
    {
        final byte[] body = ("refused by the fuzz " + r.nextInt(1000)).getBytes(StandardCharsets.UTF_8);
        final ByteBuffer bb = ByteBuffer.allocate(Handshake.REPLY_FIXED_LENGTH + body.length);
        bb.putInt(Handshake.MAGIC).putShort(Handshake.VERSION).put(Handshake.STATUS_REJECT).putInt(rank);
        return bb.putShort((short)body.length).put(body).array();
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Both.

    /**
     * A fresh transport, and with it no peer connected, at the first case of a run and every {@value #EPOCH_CASES}
     * cases: a case depends only on the cases since, which a failure names.
     */
    private void startEpoch(final FuzzCases cases, final long index, final int rank)
    {
        if (index == cases.first() || 0 == index % EPOCH_CASES || admitted.size() >= WORLD_SIZE - SPARE_PEERS)
        {
            rebind(rank);
            epochStart = index;
        }
    }

    private void rebind(final int rank)
    {
        if (null != transport)
        {
            transport.close();
        }
        admitted.clear();
        admittedPeers.clear();
        transport = NettyTransport.bind(new TcpSettings()
            .rank(rank)
            .worldSize(WORLD_SIZE)
            .jobToken(Cluster.TOKEN)
            .commId(Cluster.COMM_ID)
            .bindAddress(InetAddress.getLoopbackAddress())
            .connectTimeout(CONNECT_TIMEOUT)
            .ioThreads(0)
            .connectionsPerPeer(CONNECTIONS)
            .maxFrameBytes(MAX_FRAME_BYTES)
            .inbound(inbound));
    }

    /**
     * A channel for one handshake, active from the start, whose clock stands still until the test moves it.
     *
     * @param handler the handshake's side.
     * @param clock   its clock.
     * @return the channel.
     */
    private static EmbeddedChannel handshaking(final ChannelHandler handler, final MockTicker clock)
    {
        final EmbeddedChannel channel = EmbeddedChannel.builder().handlers(handler).ticker(clock).build();
        channel.config().setAllocator(REPLIES);
        return channel;
    }

    /** Frames after a handshake: often none, often a fuzzed stream of frames, sometimes random bytes. */
    private static byte[] trailing(final SplittableRandom r)
    {
        final int pick = r.nextInt(100);
        if (pick < 50)
        {
            return new byte[0];
        }
        return pick < 85 ? FrameStreams.generate(r, MAX_FRAME_BYTES) : FrameStreams.randomBytes(r, 1 + r.nextInt(100));
    }

    /** The frames from {@code start} on reached the receiver as the reference decoder says. */
    private String checkFrames(
        final byte[] all, final int start, final int peer, final EmbeddedChannel channel, final boolean peerCloses)
    {
        final List<String> expected = FrameStreams.expect(all, start, MAX_FRAME_BYTES, FrameStreams.SinkFault.NONE,
            peerCloses, peer, false);
        final List<String> events = FrameStreams.withoutMarkers(expected);
        final List<String> actual = inbound.events();
        boolean same = events.size() == actual.size();
        for (int i = 0; same && i < events.size(); i++)
        {
            same = FrameStreams.matches(events.get(i), actual.get(i));
        }
        if (!same || !inbound.violations().isEmpty())
        {
            return "frames after the handshake reported " + actual + ", expected " + events + "; contract broken: " +
                inbound.violations();
        }
        final boolean open = !peerCloses && !FrameStreams.closesItself(expected);
        if (open != channel.isOpen())
        {
            return "open " + channel.isOpen() + " after the frames, expected " + open;
        }
        return null;
    }

    /** Reads what the handler wrote, each message as bytes, releasing it. */
    private static void readReplies(final EmbeddedChannel channel, final List<byte[]> into)
    {
        Object m;
        while (null != (m = channel.readOutbound()))
        {
            final ByteBuf buf = (ByteBuf)m;
            final byte[] bytes = new byte[buf.readableBytes()];
            buf.readBytes(bytes);
            buf.release();
            into.add(bytes);
        }
    }

    /** What is wrong with a reply's fixed part, or null. */
    private static String malformedReply(final byte[] reply, final int rank)
    {
        if (reply.length < Handshake.REPLY_FIXED_LENGTH)
        {
            return "a reply of " + reply.length + " bytes";
        }
        final ByteBuffer bb = ByteBuffer.wrap(reply);
        final int magic = bb.getInt();
        final int version = bb.getShort() & 0xFFFF;
        bb.get();
        final int from = bb.getInt();
        final int bodyLength = bb.getShort() & 0xFFFF;
        if (Handshake.MAGIC != magic || Handshake.VERSION != version || rank != from ||
            bodyLength != reply.length - Handshake.REPLY_FIXED_LENGTH || bodyLength > Handshake.REPLY_BODY_MAX)
        {
            return "a malformed reply: magic " + Integer.toHexString(magic) + ", version " + version + ", rank " +
                from + ", body " + bodyLength + " of " + (reply.length - Handshake.REPLY_FIXED_LENGTH) + " bytes";
        }
        return null;
    }

    private static byte[] body(final byte[] reply)
    {
        return Arrays.copyOfRange(reply, Handshake.REPLY_FIXED_LENGTH, reply.length);
    }

    private static byte[] encodeHello(
        final int version, final long commId, final int rank, final int worldSize, final int connection,
        final int connections, final byte[] nonce)
    {
        final ByteBuffer bb = ByteBuffer.allocate(Handshake.HELLO_LENGTH);
        bb.putInt(Handshake.MAGIC).putShort((short)version).putLong(commId).putInt(rank).putInt(worldSize);
        return bb.putShort((short)connection).putShort((short)connections).put(nonce).array();
    }

    /** The rank a HELLO claims, when it has one. */
    private static int helloRank(final byte[] hello)
    {
        return hello.length >= Handshake.HELLO_LENGTH ? Handshake.decodeHello(hello).rank() : -1;
    }

    /** A peer in {@code [from, to)} with no connection on this transport. */
    private int freshPeer(final SplittableRandom r, final int from, final int to)
    {
        int peer;
        do
        {
            peer = from + r.nextInt(to - from);
        }
        while (admitted.containsKey(peer));
        return peer;
    }

    private static int pick(final SplittableRandom r, final int... choices)
    {
        return choices[r.nextInt(choices.length)];
    }

    private static byte[] concat(final byte[] a, final byte[] b)
    {
        final byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private void tally(final String outcome)
    {
        outcomes.merge(outcome, 1, Integer::sum);
    }

    private void checkCoverage(final FuzzCases cases, final List<String> required)
    {
        if (cases.count() < COVERAGE_MIN_CASES)
        {
            return;
        }
        for (final String outcome : required)
        {
            assertTrue(outcomes.containsKey(outcome), () -> "no case ended '" + outcome + "': " + outcomes);
        }
    }

    private String describe(final FuzzCases cases, final long index, final byte[] bytes, final Proof proof)
    {
        return cases.describe(index, epochStart) + "; proof " + proof + "; " +
            FrameStreams.describeBytes("bytes received", bytes);
    }
}
