package dev.hccl.transport.shm;

import dev.hccl.api.CommConfig;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.PeerEndpoint;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.TransportContext;
import dev.hccl.api.testing.RecordingInbound;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Test support: ranks as transports in this JVM, on real shared memory in a directory of their own, with a
 * map-backed bootstrap; closed together.
 */
final class ShmCluster implements AutoCloseable
{
    static final long COMM_ID = 0x5EED_CAFEL;
    static final String NODE = "node-a";
    /** The job token of every rank of a cluster. */
    static final String TOKEN = "test-token";
    static final long TIMEOUT_SECONDS = 20;
    /** Small rings by default, so that the tests cross ring boundaries and fill rings often. */
    static final int TEST_RING_BYTES = 256 * 1024;
    /** The heartbeat timeout of the tests: HCCL_HEARTBEAT_TIMEOUT's default. */
    static final long HEARTBEAT_TIMEOUT_MILLIS = 30_000;

    final Path dir;
    final long commId;
    final MapBootstrap bootstrap = new MapBootstrap();
    final List<ShmTransport> transports = new ArrayList<>();
    private final boolean ownDir;
    /** Whether the ranks opened from here on run under HCCL_CHECKSUM. */
    private boolean checksum;
    /** The HCCL_SHM_ARENA_SIZE of the ranks opened from here on; null: the default. */
    private Integer arenaSize;
    private final ExecutorService executor = Executors.newCachedThreadPool(r ->
    {
        final Thread t = new Thread(r, "test-rank");
        t.setDaemon(true);
        return t;
    });

    /** A cluster in a new directory under /dev/shm, deleted on close. */
    ShmCluster() throws IOException
    {
        this(Files.createTempDirectory(Path.of("/dev/shm"), "hccl-shm-test-"), COMM_ID, true);
    }

    /** A cluster in the given directory, left in place on close. */
    ShmCluster(final Path dir, final long commId)
    {
        this(dir, commId, false);
    }

    private ShmCluster(final Path dir, final long commId, final boolean ownDir)
    {
        this.dir = dir;
        this.commId = commId;
        this.ownDir = ownDir;
    }

    static CommConfig config(final int rank, final int worldSize, final Path dir)
    {
        return config(rank, worldSize, dir, false);
    }

    static CommConfig config(final int rank, final int worldSize, final Path dir, final boolean checksum)
    {
        return CommConfig.builder().environment(Map.of()).worldSize(worldSize).rank(rank)
            .set(ShmTransportProvider.DIR, dir.toString())
            .set(CommConfig.CHECKSUM, checksum)
            .conclude();
    }

    /**
     * Opens the ranks from here on under HCCL_CHECKSUM, or not.
     *
     * @param on whether DATA records carry a CRC32C.
     * @return this.
     */
    ShmCluster checksum(final boolean on)
    {
        this.checksum = on;
        return this;
    }

    /**
     * Sets the node arena's region size of the ranks opened from here on.
     *
     * @param bytes HCCL_SHM_ARENA_SIZE; 0 turns the arena off.
     * @return this.
     */
    ShmCluster arenaSize(final int bytes)
    {
        this.arenaSize = bytes;
        return this;
    }

    TransportContext context(final int rank, final int worldSize, final RecordingInbound inbound)
    {
        CommConfig config = config(rank, worldSize, dir, checksum);
        if (null != arenaSize)
        {
            config = CommConfig.builder().environment(Map.of()).worldSize(worldSize).rank(rank)
                .set(ShmTransportProvider.DIR, dir.toString())
                .set(CommConfig.CHECKSUM, checksum)
                .set(ShmTransportProvider.ARENA_SIZE, arenaSize)
                .conclude();
        }
        return new TransportContext(rank, worldSize, commId, TOKEN, NODE, InetAddress.getLoopbackAddress(),
            config, inbound, bootstrap);
    }

    ShmTransport open(final int rank, final int worldSize, final RecordingInbound inbound)
    {
        return open(rank, worldSize, inbound, TEST_RING_BYTES, ShmCluster.HEARTBEAT_TIMEOUT_MILLIS);
    }

    ShmTransport open(
        final int rank, final int worldSize, final RecordingInbound inbound, final int ringBytes,
        final long heartbeatTimeoutMillis)
    {
        final ShmTransport t =
            new ShmTransport(context(rank, worldSize, inbound), dir, ringBytes, heartbeatTimeoutMillis);
        transports.add(t);
        return t;
    }

    /**
     * Where the lower rank of a pair creates the pair's file.
     *
     * @param lo the lower rank.
     * @param hi the higher rank.
     * @return the path in this cluster's directory.
     */
    Path file(final int lo, final int hi)
    {
        return dir.resolve(new ShmNames(TOKEN, commId).fileName(lo, hi));
    }

    static PeerEndpoint endpoint(final int rank, final ShmTransport t)
    {
        return new PeerEndpoint(rank, NODE, t.localAddress());
    }

    /**
     * Opens and connects every rank of {@code inbounds.length}, all at once, each on its own thread.
     */
    ShmTransport[] connected(final RecordingInbound[] inbounds) throws Exception
    {
        return connected(inbounds, TEST_RING_BYTES);
    }

    ShmTransport[] connected(final RecordingInbound[] inbounds, final int ringBytes) throws Exception
    {
        final int n = inbounds.length;
        final ShmTransport[] ts = new ShmTransport[n];
        for (int r = 0; r < n; r++)
        {
            inbounds[r] = new RecordingInbound();
            ts[r] = open(r, n, inbounds[r], ringBytes, ShmCluster.HEARTBEAT_TIMEOUT_MILLIS);
        }
        final List<Set<Integer>> sets = connectAll(ts);
        for (int r = 0; r < n; r++)
        {
            assertTrue(sets.get(r).size() == n - 1, "rank " + r + " connected only " + sets.get(r));
        }
        return ts;
    }

    /** Connects every rank to every other, at once; returns what each connect returned. */
    List<Set<Integer>> connectAll(final ShmTransport[] ts) throws Exception
    {
        final List<Future<Set<Integer>>> futures = new ArrayList<>();
        for (int r = 0; r < ts.length; r++)
        {
            futures.add(connectAsync(ts, r, 0));
        }
        final List<Set<Integer>> sets = new ArrayList<>();
        for (final Future<Set<Integer>> f : futures)
        {
            sets.add(f.get(TIMEOUT_SECONDS + 10, TimeUnit.SECONDS));
        }
        return sets;
    }

    /** Connects rank {@code r} to every other rank of {@code ts}, on a thread of its own, after a delay. */
    Future<Set<Integer>> connectAsync(final ShmTransport[] ts, final int r, final long delayMillis)
    {
        final List<PeerEndpoint> peers = new ArrayList<>();
        for (int p = 0; p < ts.length; p++)
        {
            if (p != r)
            {
                peers.add(endpoint(p, ts[p]));
            }
        }
        return connectAsync(ts[r], endpoint(r, ts[r]), peers, delayMillis, TIMEOUT_SECONDS * 1000);
    }

    Future<Set<Integer>> connectAsync(
        final ShmTransport t, final PeerEndpoint self, final List<PeerEndpoint> peers, final long delayMillis,
        final long timeoutMillis)
    {
        return executor.submit(() ->
        {
            Thread.sleep(delayMillis);
            return t.connect(self, peers, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis));
        });
    }

    /**
     * Connects two ranks, rank 0 seeing rank 1 as another process (whose death it will watch for), while rank 1's
     * real heartbeat goes on.
     */
    void connectSeeingRankOneAs(final ShmTransport t0, final ShmTransport t1, final Process standIn) throws Exception
    {
        final ShmAddress address = new ShmAddress(
            t0.directory().toString(), standIn.pid(), ShmAddress.startMillis(standIn.toHandle()));
        final Future<Set<Integer>> c0 = connectAsync(t0, endpoint(0, t0),
            List.of(new PeerEndpoint(1, NODE, address.encode())), 0, TIMEOUT_SECONDS * 1000);
        final Future<Set<Integer>> c1 = connectAsync(t1, endpoint(1, t1), List.of(endpoint(0, t0)), 0,
            TIMEOUT_SECONDS * 1000);
        assertEquals(Set.of(1), c0.get(TIMEOUT_SECONDS + 10, TimeUnit.SECONDS));
        assertEquals(Set.of(0), c1.get(TIMEOUT_SECONDS + 10, TimeUnit.SECONDS));
    }

    <T> Future<T> async(final java.util.concurrent.Callable<T> task)
    {
        return executor.submit(task);
    }

    static Request send(
        final ShmTransport from, final int to, final long seq, final long tag, final OpDescriptor desc,
        final ByteBuffer payload)
    {
        final Request r = new Request(to, true, tag);
        from.link(to).send(COMM_ID, seq, tag, desc, payload, r);
        return r;
    }

    /**
     * Drives a transport's engine on this thread, as a waiting communicator thread does, until the condition holds.
     */
    static void drive(final ShmTransport t, final BooleanSupplier until)
    {
        final ProgressEngine engine = t.progressEngine();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        while (!until.getAsBoolean())
        {
            if (System.nanoTime() - deadline >= 0)
            {
                fail("the condition did not come true within " + TIMEOUT_SECONDS + " s of driving");
            }
            if (!engine.enter())
            {
                Thread.onSpinWait();
                continue;
            }
            try
            {
                while (!until.getAsBoolean() && System.nanoTime() - deadline < 0)
                {
                    if (0 == engine.poll(0))
                    {
                        Thread.yield();
                    }
                }
            }
            finally
            {
                engine.exit();
            }
        }
    }

    static void assertOk(final Request r)
    {
        assertTrue(r.isDone(), "not done: " + r);
        assertNull(r.failure(), () -> "failed: " + r.failure());
    }

    /** The names in the directory. */
    List<String> files() throws IOException
    {
        try (Stream<Path> s = Files.list(dir))
        {
            return s.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
        }
    }

    @Override
    public void close() throws IOException
    {
        for (final ShmTransport t : transports)
        {
            t.close();
        }
        executor.shutdownNow();
        if (ownDir)
        {
            try (Stream<Path> s = Files.walk(dir))
            {
                for (final Path p : s.sorted(Comparator.reverseOrder()).collect(Collectors.toList()))
                {
                    Files.deleteIfExists(p);
                }
            }
        }
    }
}
