package dev.hccl.bench.jmh;

import dev.hccl.api.CommConfig;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.Bootstrap;
import dev.hccl.api.spi.Inbound;
import dev.hccl.api.spi.Link;
import dev.hccl.api.spi.MessageSink;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.PeerEndpoint;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Transport;
import dev.hccl.api.spi.TransportContext;
import dev.hccl.api.spi.TransportProvider;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Frames on the TCP transport: a DATA frame (the 48-byte header and {@code payloadBytes} of payload) sent by one
 * end of the transport and parsed by another, connected over loopback in this JVM. The transport is found as the
 * communicator finds it, through its {@link TransportProvider} (the one whose transport crosses nodes), and opened
 * with one I/O thread per end.
 * <p>
 * <b>Why not the header codec alone.</b> The header is written by {@code Frames} and parsed by
 * {@code FrameReceiver}, both package-private in {@code hccl-transport-netty}; reaching them would mean widening the
 * production API for a benchmark, or a class in their package here. This benchmark goes through the public path
 * instead ({@code Link.send} to the receiving {@link Inbound}), which is what a frame really costs:
 * <ul>
 *     <li>{@link #oneWay()}: one frame at a time, from {@code send} until the receiver's sink completes. Latency:
 *     mostly the two I/O threads' wake-ups, the {@code write} and {@code read} system calls and loopback TCP;
 *     the header's encode and decode are a small part of it.</li>
 *     <li>{@link #burst()}: {@value #BURST} frames back to back, then the wait for the last. The transport writes a
 *     burst with one flush and the receiver parses many frames per read, so the system calls and wake-ups are shared
 *     and the score, per frame, is close to the CPU cost of a frame: buffer allocation, header encode, queueing,
 *     header decode and validation, dispatch to the sink. That is the figure to watch for a change to the frame
 *     code.</li>
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {
    BenchmarkSupport.ADD_OPENS, BenchmarkSupport.VECTOR_MODULE, BenchmarkSupport.QUIET_LOGGING})
public class FrameBenchmark
{
    /** Frames per {@link #burst()} invocation. */
    static final int BURST = 256;

    private static final long COMM_ID = 0x4A4D_4846L;
    private static final String TOKEN = "jmh";
    private static final int RECEIVER = 0;
    private static final int SENDER = 1;
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(30);
    private static final String NODE = "jmh";
    /** TCP needs no rendezvous store: {@link #setUp()} hands each end the other's address. */
    private static final Bootstrap NO_STORE = new Bootstrap()
    {
        @Override
        public void put(final String key, final byte[] value)
        {
            throw new UnsupportedOperationException("no store in this benchmark");
        }

        @Override
        public byte[] get(final String key, final long deadlineNanos)
        {
            throw new UnsupportedOperationException("no store in this benchmark");
        }

        @Override
        public long add(final String key, final long delta)
        {
            throw new UnsupportedOperationException("no store in this benchmark");
        }
    };

    /** Payload bytes after the header: none (a bare header) or 8 (the smallest collective message). */
    @Param({"0", "8"})
    public int payloadBytes;

    private final CountingInbound receiverInbound = new CountingInbound();
    private final CountingInbound senderInbound = new CountingInbound();
    private Transport receiver;
    private Transport sender;
    private Link link;
    private ByteBuffer payload;
    private OpDescriptor descriptor;
    /** Frames sent so far; only the benchmark thread touches it. */
    private long sent;

    /**
     * Opens two ends of the TCP transport on loopback, one I/O thread each, and connects them.
     *
     * @throws Exception when they do not connect.
     */
    @Setup(Level.Trial)
    public void setUp() throws Exception
    {
        final TransportProvider tcp = networkTransport();
        receiver = tcp.open(context(RECEIVER, receiverInbound));
        sender = tcp.open(context(SENDER, senderInbound));
        final PeerEndpoint receiving = new PeerEndpoint(RECEIVER, NODE, receiver.localAddress());
        final PeerEndpoint sending = new PeerEndpoint(SENDER, NODE, sender.localAddress());
        final long deadline = System.nanoTime() + CONNECT_TIMEOUT.toNanos();
        // The receiver waits for the sender to dial in, so the two connects must run at once.
        final ExecutorService executor = Executors.newSingleThreadExecutor();
        try
        {
            final Future<?> accepting = executor.submit(() -> receiver.connect(receiving, List.of(sending), deadline));
            sender.connect(sending, List.of(receiving), deadline);
            accepting.get(CONNECT_TIMEOUT.toSeconds() + 5, TimeUnit.SECONDS);
        }
        catch (final Exception | Error ex)
        {
            // Do not count on a tear-down after a failed set-up: stop the I/O threads here (tearDown is idempotent).
            tearDown();
            throw ex;
        }
        finally
        {
            executor.shutdownNow();
        }
        link = sender.link(RECEIVER);
        payload = ByteBuffer.allocateDirect(payloadBytes).order(ByteOrder.nativeOrder());
        // Elements of FP32 when there are any, as an allReduce segment would carry; a realistic fingerprint.
        descriptor = new OpDescriptor(
            Operation.ALL_REDUCE, DataType.FP32, ReduceOp.SUM, OpDescriptor.NO_ROOT, payloadBytes / 4);
        sent = 0;
    }

    /**
     * Closes both transports; nothing is in flight, since every invocation waited for its last frame.
     */
    @TearDown(Level.Trial)
    public void tearDown()
    {
        if (null != sender)
        {
            sender.close();
            sender = null;
        }
        if (null != receiver)
        {
            receiver.close();
            receiver = null;
        }
    }

    /**
     * One frame, from {@code send} until the receiver has parsed it and completed its sink.
     */
    @Benchmark
    public void oneWay()
    {
        sendFrame();
        awaitReceived();
    }

    /**
     * {@value #BURST} frames back to back; the score is per frame.
     */
    @Benchmark
    @OperationsPerInvocation(BURST)
    public void burst()
    {
        for (int i = 0; i < BURST; i++)
        {
            sendFrame();
        }
        awaitReceived();
    }

    private void sendFrame()
    {
        final long seq = sent++;
        // A Request completes once, so each send needs its own, as in the communicator; nobody waits on it here:
        // the receiver's count says when the frame has arrived, and a failed link shows there.
        link.send(COMM_ID, seq, 0, descriptor, payload, new Request(RECEIVER, true, 0));
    }

    private void awaitReceived()
    {
        final long target = sent;
        final long start = System.nanoTime();
        long spins = 0;
        while (receiverInbound.received < target)
        {
            final Throwable failure = receiverInbound.failure;
            if (null != failure)
            {
                throw new IllegalStateException("the link failed", failure);
            }
            BenchmarkSupport.backOff(spins++, start, "frame " + target + " (received " +
                receiverInbound.received + ")");
        }
    }

    /** The plug-in whose transport crosses nodes: TCP in the library's artifact. */
    private static TransportProvider networkTransport()
    {
        for (final TransportProvider provider : ServiceLoader.load(TransportProvider.class))
        {
            if (provider.kind().crossesNodes())
            {
                return provider;
            }
        }
        throw new IllegalStateException("no network transport on the class path");
    }

    private static TransportContext context(final int rank, final Inbound inbound)
    {
        final CommConfig config = CommConfig.builder().environment(Map.of("HCCL_IO_THREADS", "1",
            "HCCL_CONNECT_TIMEOUT", Long.toString(CONNECT_TIMEOUT.toSeconds()))).conclude();
        return new TransportContext(rank, 2, COMM_ID, TOKEN, NODE, InetAddress.getLoopbackAddress(), config, inbound,
            NO_STORE);
    }

    /**
     * Counts completed frames. Every callback comes from the receiving link's one I/O thread, so a volatile counter
     * with a single writer is enough.
     */
    private static final class CountingInbound implements Inbound, MessageSink
    {
        volatile long received;
        volatile Throwable failure;

        @Override
        public MessageSink onMessage(
            final int fromRank, final long commId, final long seq, final long tag, final OpDescriptor desc,
            final int length)
        {
            return this;
        }

        @Override
        public void write(final ByteBuffer chunk)
        {
            // Consume without copying: the measurement is the frame, not what a receive does with its bytes.
            chunk.position(chunk.limit());
        }

        @Override
        public void complete()
        {
            received++;
        }

        @Override
        public void onLinkFailure(final int peer, final Throwable cause)
        {
            failure = cause;
        }

        @Override
        public void onPeerClosed(final int peer)
        {
        }

        @Override
        public void onAbort(final int peer, final long commId, final String reason)
        {
            failure = new IllegalStateException("rank " + peer + " aborted: " + reason);
        }
    }
}
