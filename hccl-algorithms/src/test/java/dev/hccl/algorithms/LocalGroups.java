package dev.hccl.algorithms;

import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.RegisteredMemory;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;
import org.agrona.BufferUtil;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Test support: {@code n} ranks as threads, each with a {@link PeerGroup} over memory, so that an algorithm can be
 * run on every world size without a transport. A message is matched by (sender, tag), as the real mailbox matches
 * it; one that comes before its receive waits in a copy. With {@code jitter}, deliveries are delayed by random
 * amounts, so that messages arrive in orders a real network produces, and a result that depends on arrival order
 * shows.
 */
final class LocalGroups implements AutoCloseable
{
    /** How long a wait may last before the test calls the algorithm hung. */
    static final long WAIT_SECONDS = 60;
    /**
     * Each rank's region in the node arena that ranks on one node share: small, so that the large counts take
     * several steps of the arena's protocol (halves of 16,256 bytes).
     */
    static final int ARENA_REGION_BYTES = 32 * 1024;
    /** Looks at a signal between naps of a waiting rank, after its first spins. */
    private static final int SIGNAL_SPINS = 64;
    private static final long SIGNAL_NAP_NANOS = 20_000;

    private final int size;
    private final int segmentBytes;
    /** Each rank's node, as {@link PeerGroup#node(int)} reports it; all 0 for one node. */
    private final int[] nodeOfRank;
    /** The same, as {@link PeerGroup#layout()} reports it. */
    private final RankLayout layout;
    private final Random jitter;
    /** Messages sent between ranks of different nodes, over every run. */
    private final AtomicInteger crossNode = new AtomicInteger();
    /** Their payload bytes. */
    private final AtomicLong crossNodeBytes = new AtomicLong();
    private final Mailbox[] boxes;
    /** Each node's arena memory, by node; kept from run to run, as a real one is. */
    private final ByteBuffer[] arenaMemory;
    /** How often a rank found another member's registered buffer, to read it in place ({@link #registeredReads}). */
    private final AtomicInteger registeredReads = new AtomicInteger();
    /** Each node's registered buffers: by registration, each member's. */
    private final List<List<ByteBuffer[]>> registered = new ArrayList<>();
    private final ExecutorService ranks;
    private final ScheduledExecutorService delayer;
    /** What the arenas answer to {@link NodeArena#checksummed()}. */
    private volatile boolean checksummed;
    private volatile boolean pausesAfterSignals;

    /**
     * Ranks on one node.
     *
     * @param size         the world size.
     * @param segmentBytes what {@link PeerGroup#segmentBytes()} answers: small values exercise pipelining.
     * @param jitterSeed   seed of the random delivery delays, or null for immediate delivery.
     */
    LocalGroups(final int size, final int segmentBytes, final Long jitterSeed)
    {
        this(new int[size], segmentBytes, jitterSeed);
    }

    /**
     * Ranks on several simulated nodes.
     *
     * @param nodeOfRank   each rank's node, numbered from 0 in order of the nodes' lowest ranks.
     * @param segmentBytes what {@link PeerGroup#segmentBytes()} answers.
     * @param jitterSeed   seed of the random delivery delays, or null for immediate delivery.
     */
    LocalGroups(final int[] nodeOfRank, final int segmentBytes, final Long jitterSeed)
    {
        final int size = nodeOfRank.length;
        this.nodeOfRank = nodeOfRank.clone();
        this.layout = RankLayout.ofNodes(nodeOfRank);
        this.size = size;
        this.segmentBytes = segmentBytes;
        this.jitter = jitterSeed == null ? null : new Random(jitterSeed);
        this.boxes = new Mailbox[size];
        this.arenaMemory = new ByteBuffer[layout.nodeCount()];
        for (int node = 0; node < arenaMemory.length; node++)
        {
            arenaMemory[node] = ByteBuffer.allocateDirect(layout.sizeOf(node) * ARENA_REGION_BYTES)
                .order(ByteOrder.nativeOrder());
            registered.add(new CopyOnWriteArrayList<>());
        }
        for (int r = 0; r < size; r++)
        {
            boxes[r] = new Mailbox();
        }
        final AtomicInteger next = new AtomicInteger();
        this.ranks = Executors.newFixedThreadPool(size, task ->
        {
            final Thread t = new Thread(task, "rank-" + next.getAndIncrement());
            t.setDaemon(true);
            return t;
        });
        this.delayer = Executors.newSingleThreadScheduledExecutor(task ->
        {
            final Thread t = new Thread(task, "delayer");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Has the arenas' operations cover what they read with CRC32Cs, as {@code HCCL_CHECKSUM} does.
     *
     * @return this.
     */
    LocalGroups checksummed()
    {
        checksummed = true;
        return this;
    }

    /**
     * Makes a rank now and then pause after a signal it awaited arrived, before it goes on (to read what the signal
     * published): a reader slow after another's signal, which an arena rank that runs ahead must not overtake.
     *
     * @return this.
     */
    LocalGroups pausingAfterSignals()
    {
        pausesAfterSignals = true;
        return this;
    }

    /** What each rank runs. */
    @FunctionalInterface
    interface RankBody<T>
    {
        T run(PeerGroup group) throws Exception;
    }

    /**
     * Runs the body on every rank at once and returns each rank's result, in rank order; a rank's failure fails the
     * call.
     */
    <T> List<T> run(final RankBody<T> body) throws Exception
    {
        final List<Future<T>> futures = new ArrayList<>();
        for (int r = 0; r < size; r++)
        {
            final Group group = new Group(r);
            futures.add(ranks.submit(() ->
            {
                group.owner = Thread.currentThread();
                return body.run(group);
            }));
        }
        final List<T> results = new ArrayList<>();
        for (final Future<T> f : futures)
        {
            results.add(f.get(WAIT_SECONDS * 2, TimeUnit.SECONDS));
        }
        for (int r = 0; r < size; r++)
        {
            final String left = boxes[r].leftovers();
            if (left != null)
            {
                throw new AssertionError("rank " + r + ": " + left);
            }
        }
        return results;
    }

    /**
     * Registers a buffer of {@code bytes} for every rank, as {@code Communicator.allocateRegistered} does: each
     * node's arena then finds it ({@link RegisteredMemory#locate}) and hands it to the other members
     * ({@link RegisteredMemory#memory}). Call between runs.
     *
     * @param bytes the size.
     * @return each rank's buffer, by rank.
     */
    ByteBuffer[] register(final int bytes)
    {
        final ByteBuffer[] byRank = new ByteBuffer[size];
        for (int node = 0; node < layout.nodeCount(); node++)
        {
            final int[] ranksOn = layout.ranksOn(node);
            final ByteBuffer[] members = new ByteBuffer[ranksOn.length];
            for (int m = 0; m < members.length; m++)
            {
                members[m] = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
                byRank[ranksOn[m]] = members[m];
            }
            registered.get(node).add(members);
        }
        return byRank;
    }

    /** How often so far a rank looked up another member's registered buffer to read it where it lies. */
    int registeredReads()
    {
        return registeredReads.get();
    }

    /** Messages sent so far between ranks of different nodes. */
    int crossNodeMessages()
    {
        return crossNode.get();
    }

    /** Payload bytes sent so far between ranks of different nodes. */
    long crossNodeBytes()
    {
        return crossNodeBytes.get();
    }

    @Override
    public void close()
    {
        ranks.shutdownNow();
        delayer.shutdownNow();
    }

    private void deliver(final int from, final int to, final long tag, final byte[] payload)
    {
        if (jitter == null)
        {
            boxes[to].arrive(from, tag, payload);
            return;
        }
        final long delayMicros;
        synchronized (jitter)
        {
            delayMicros = jitter.nextInt(4) == 0 ? jitter.nextInt(500) : 0;
        }
        delayer.schedule(() -> boxes[to].arrive(from, tag, payload), delayMicros, TimeUnit.MICROSECONDS);
    }

    /** One rank's view. */
    private final class Group implements PeerGroup
    {
        private final int rank;
        /** Slots 0 to 2, as {@link PeerGroup#scratch} numbers them. */
        private final ByteBuffer[] scratch = new ByteBuffer[3];
        /** The rank's thread: the only one that may take scratch, as {@link PeerGroup} says. */
        private volatile Thread owner;

        Group(final int rank)
        {
            this.rank = rank;
        }

        @Override
        public int rank()
        {
            return rank;
        }

        @Override
        public int size()
        {
            return size;
        }

        @Override
        public Request send(final int peer, final long tag, final ByteBuffer src, final int offset, final int length)
        {
            checkPeer(peer);
            final byte[] copy = new byte[length];
            src.get(offset, copy, 0, length);
            final Request request = new Request(peer, true, tag);
            if (nodeOfRank[rank] != nodeOfRank[peer])
            {
                crossNode.incrementAndGet();
                crossNodeBytes.addAndGet(length);
            }
            deliver(rank, peer, tag, copy);
            request.complete();
            return request;
        }

        @Override
        public Request recv(final int peer, final long tag, final ByteBuffer dst, final int offset, final int length)
        {
            return recvReduce(peer, tag, dst, offset, length, null);
        }

        @Override
        public Request recvReduce(
            final int peer, final long tag, final ByteBuffer dst, final int offset, final int length,
            final Reducer reducer)
        {
            checkPeer(peer);
            final Request request = new Request(peer, false, tag);
            boxes[rank].post(new Posted(peer, tag, dst, offset, length, reducer, request));
            return request;
        }

        @Override
        public void await(final Request request)
        {
            if (!request.await(System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS)))
            {
                throw new AssertionError("rank " + rank + " waited " + WAIT_SECONDS + " s for " + request);
            }
            if (request.failure() != null)
            {
                throw new AssertionError("rank " + rank + ": " + request + " failed", request.failure());
            }
        }

        @Override
        public ByteBuffer scratch(final int slot, final int bytes)
        {
            if (Thread.currentThread() != owner)
            {
                throw new AssertionError("rank " + rank + ": scratch taken on " + Thread.currentThread().getName() +
                    ", not on the operation's thread " + owner.getName());
            }
            if (scratch[slot] == null || scratch[slot].capacity() < bytes)
            {
                scratch[slot] = ByteBuffer.allocateDirect(Math.max(bytes, 1)).order(ByteOrder.nativeOrder());
            }
            return scratch[slot];
        }

        @Override
        public int segmentBytes()
        {
            return segmentBytes;
        }

        @Override
        public RankLayout layout()
        {
            return layout;
        }

        @Override
        public NodeArena arena()
        {
            return arena;
        }

        @Override
        public void awaitSignal(final int index, final long atLeast, final int writer)
        {
            checkPeer(writer);
            if (nodeOfRank[writer] != nodeOfRank[rank])
            {
                throw new AssertionError("rank " + rank + " awaits a signal of rank " + writer + " of another node");
            }
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            // Spins a little, then naps, as the real wait does where ranks outnumber cores (these ranks are threads
            // on a busy machine: yielding alone would take the cores from the rank that is to signal).
            int turns = 0;
            while (arena.signal(index) < atLeast)
            {
                if (System.nanoTime() - deadline > 0)
                {
                    throw new AssertionError("rank " + rank + " waited " + WAIT_SECONDS + " s for rank " + writer +
                        "'s signal at " + index + " to reach " + atLeast + "; it is " + arena.signal(index));
                }
                if (++turns < SIGNAL_SPINS)
                {
                    Thread.onSpinWait();
                }
                else
                {
                    LockSupport.parkNanos(SIGNAL_NAP_NANOS);
                }
            }
            if (pausesAfterSignals && ThreadLocalRandom.current().nextInt(16) == 0)
            {
                LockSupport.parkNanos(ThreadLocalRandom.current().nextInt(200_000));
            }
        }

        /** This rank's view of its node's registered buffers ({@link #register}). */
        private final RegisteredMemory registeredMemory = new RegisteredMemory()
        {
            @Override
            public ByteBuffer create(final int bytes)
            {
                throw new AssertionError("rank " + rank + ": register through LocalGroups.register");
            }

            @Override
            public boolean mapPeers(final int bytes)
            {
                throw new AssertionError("rank " + rank + ": register through LocalGroups.register");
            }

            @Override
            public boolean conclude(final boolean complete)
            {
                throw new AssertionError("rank " + rank + ": register through LocalGroups.register");
            }

            @Override
            public long locate(final ByteBuffer buffer, final int index, final int length)
            {
                if (!buffer.isDirect())
                {
                    return -1;
                }
                final long address = BufferUtil.address(buffer) + index;
                final List<ByteBuffer[]> node = registered.get(nodeOfRank[rank]);
                for (int id = 0; id < node.size(); id++)
                {
                    final ByteBuffer mine = node.get(id)[layout.localRank(rank)];
                    final long offset = address - BufferUtil.address(mine);
                    if (offset >= 0 && offset + length <= mine.capacity())
                    {
                        return (long)id << 32 | offset;
                    }
                }
                return -1;
            }

            @Override
            public ByteBuffer memory(final int member, final int id)
            {
                final List<ByteBuffer[]> node = registered.get(nodeOfRank[rank]);
                if (member != layout.localRank(rank))
                {
                    registeredReads.incrementAndGet();
                }
                return id < node.size() ? node.get(id)[member] : null;
            }
        };

        /** This rank's view of its node's arena: the node's ranks, in ascending order. */
        private final NodeArena arena = new NodeArena()
        {
            /** Made on the first operation: {@code rank} is set after this arena is. */
            private long[] finishedSteps;
            private final AtomicReference<Object> spareSteps = new AtomicReference<>();

            @Override
            public AtomicReference<Object> spareSteps()
            {
                return spareSteps;
            }

            @Override
            public long[] finishedSteps()
            {
                if (null == finishedSteps)
                {
                    finishedSteps = new long[members()];
                }
                return finishedSteps;
            }

            @Override
            public int members()
            {
                return layout.sizeOf(nodeOfRank[rank]);
            }

            @Override
            public int member()
            {
                return layout.localRank(rank);
            }

            @Override
            public int rankOf(final int member)
            {
                return layout.ranksOn(nodeOfRank[rank])[member];
            }

            @Override
            public int regionBytes()
            {
                return ARENA_REGION_BYTES;
            }

            @Override
            public ByteBuffer memory()
            {
                return arenaMemory[nodeOfRank[rank]];
            }

            @Override
            public boolean enter()
            {
                return true;
            }

            @Override
            public void exit()
            {
            }

            @Override
            public RegisteredMemory registeredMemory()
            {
                return registeredMemory;
            }

            @Override
            public void markFailed()
            {
                throw new AssertionError("rank " + rank + ": no communicator fails in these groups");
            }

            @Override
            public int failedMember()
            {
                return -1;
            }

            @Override
            public boolean checksummed()
            {
                return checksummed;
            }
        };

        private void checkPeer(final int peer)
        {
            if (peer < 0 || peer >= size || peer == rank)
            {
                throw new AssertionError("rank " + rank + " addressed rank " + peer + " of " + size);
            }
        }
    }

    private record Posted(int peer, long tag, ByteBuffer dst, int offset, int length, Reducer reducer,
        Request request)
    {
        void fill(final byte[] payload)
        {
            if (payload.length != length)
            {
                request.fail(new AssertionError(
                    "message of " + payload.length + " bytes for a receive of " + length + " (tag " +
                    Tags.describe(tag) + ")"));
                return;
            }
            if (reducer == null)
            {
                dst.put(offset, payload, 0, length);
            }
            else
            {
                final ByteBuffer src = ByteBuffer.wrap(payload).order(ByteOrder.nativeOrder());
                reducer.reduce(dst, offset, src, 0, length / reducer.elementSize());
            }
            request.complete();
        }
    }

    /** Messages to one rank, matched by (sender, tag). */
    private static final class Mailbox
    {
        private final Map<Key, Posted> posted = new HashMap<>();
        private final Map<Key, byte[]> early = new HashMap<>();
        private String problem;

        private record Key(int peer, long tag)
        {
        }

        private static Key key(final int peer, final long tag)
        {
            return new Key(peer, tag);
        }

        synchronized void post(final Posted p)
        {
            final Key key = key(p.peer(), p.tag());
            final byte[] payload = early.remove(key);
            if (payload != null)
            {
                p.fill(payload);
            }
            else if (posted.putIfAbsent(key, p) != null)
            {
                problem = "two receives posted for rank " + p.peer() + " tag " + Tags.describe(p.tag());
            }
        }

        synchronized void arrive(final int from, final long tag, final byte[] payload)
        {
            final Key key = key(from, tag);
            final Posted p = posted.remove(key);
            if (p != null)
            {
                p.fill(payload);
            }
            else if (early.putIfAbsent(key, payload) != null)
            {
                problem = "two messages from rank " + from + " with tag " + Tags.describe(tag);
            }
        }

        synchronized String leftovers()
        {
            if (problem != null)
            {
                return problem;
            }
            if (!posted.isEmpty() || !early.isEmpty())
            {
                return posted.size() + " receive(s) never matched and " + early.size() + " message(s) never received";
            }
            return null;
        }
    }
}
