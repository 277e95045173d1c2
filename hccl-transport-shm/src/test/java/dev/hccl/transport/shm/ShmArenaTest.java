package dev.hccl.transport.shm;

import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.RegisteredMemory;
import dev.hccl.api.testing.OpenFiles;
import dev.hccl.api.testing.RecordingInbound;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The node arena: agreed by every rank that shares memory or by none, one memory seen by all, nothing left in the
 * directory, and never unmapped under a thread inside it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmArenaTest
{
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception
    {
        for (int i = toClose.size() - 1; i >= 0; i--)
        {
            toClose.get(i).close();
        }
    }

    private ShmCluster cluster() throws IOException
    {
        final ShmCluster c = new ShmCluster();
        toClose.add(c);
        return c;
    }

    @Test
    void threeRanksShareOneArenaAndLeaveNoFile() throws Exception
    {
        final ShmCluster cluster = cluster().arenaSize(64 * 1024);
        final ShmTransport[] t = cluster.connected(new RecordingInbound[3]);
        assertEquals(List.of(), cluster.files(), "files left in " + cluster.dir + " after connect");
        for (int r = 0; r < 3; r++)
        {
            final NodeArena arena = t[r].nodeArena();
            assertNotNull(arena, "rank " + r + " has no arena");
            assertEquals(3, arena.members());
            assertEquals(r, arena.member());
            assertEquals(2, arena.rankOf(2));
            assertEquals(64 * 1024, arena.regionBytes());
            assertEquals(3 * 64 * 1024, arena.memory().capacity());
        }
        // One memory: what rank 2 publishes in its region, ranks 0 and 1 read.
        final int index = 2 * 64 * 1024 + 8;
        t[2].nodeArena().signal(index, 42);
        assertEquals(42, t[0].nodeArena().signal(index));
        assertEquals(42, t[1].nodeArena().signal(index));
        for (final ShmTransport x : t)
        {
            x.close();
            assertTrue(x.nodeArena().isUnmapped(), "the arena is still mapped after close");
        }
        assertEquals(List.of(), cluster.files());
    }

    /** A rank whose arena is off has none, and the others, which cannot all share one, have none either. */
    @Test
    void oneRankWithoutAnArenaMeansNoneForAny() throws Exception
    {
        final ShmCluster cluster = cluster();
        final RecordingInbound[] in = new RecordingInbound[3];
        final ShmTransport[] t = new ShmTransport[3];
        for (int r = 0; r < 3; r++)
        {
            cluster.arenaSize(r == 1 ? 0 : 64 * 1024);
            t[r] = cluster.open(r, 3, in[r] = new RecordingInbound());
        }
        final List<Set<Integer>> connected = cluster.connectAll(t);
        assertEquals(Set.of(0, 2), connected.get(1), "the pairs connect all the same");
        for (int r = 0; r < 3; r++)
        {
            assertNull(t[r].nodeArena(), "rank " + r + " has an arena");
        }
        assertEquals(List.of(), cluster.files());
    }

    @Test
    void closeNeverUnmapsUnderAThreadInside() throws Exception
    {
        final ShmCluster cluster = cluster().arenaSize(64 * 1024);
        final ShmTransport[] t = cluster.connected(new RecordingInbound[2]);
        final ShmArena arena = t[0].nodeArena();
        assertTrue(arena.enter());
        assertFalse(arena.close(TimeUnit.MILLISECONDS.toNanos(50)), "closed with a thread inside");
        assertFalse(arena.isUnmapped());
        assertFalse(arena.enter(), "a thread entered a closing arena");
        arena.signal(0, 7); // still mapped: the thread inside may go on
        arena.exit();
        assertTrue(arena.close(TimeUnit.SECONDS.toNanos(1)));
        assertTrue(arena.isUnmapped());
    }

    @Test
    void aRegistrationIsSeenByEveryMemberFoundByAddressAndLeavesNoFile() throws Exception
    {
        final ShmCluster cluster = cluster().arenaSize(64 * 1024);
        final ShmTransport[] t = cluster.connected(new RecordingInbound[2]);
        final RegisteredMemory zero = t[0].nodeArena().registeredMemory();
        final RegisteredMemory one = t[1].nodeArena().registeredMemory();
        final ByteBuffer mine = zero.create(8192);
        final ByteBuffer theirs = one.create(8192);
        assertEquals(2, cluster.files().size(), "one file per member while registering");
        assertTrue(zero.mapPeers(8192) && one.mapPeers(8192));
        assertTrue(zero.conclude(true) && one.conclude(true));
        assertEquals(List.of(), cluster.files(), "files left in " + cluster.dir);
        theirs.putLong(4096, 0x1234_5678_9ABCL);
        assertEquals(0x1234_5678_9ABCL, zero.memory(1, 0).getLong(4096), "rank 1's buffer as rank 0 maps it");
        assertEquals(100L, zero.locate(mine.slice(100, 50), 0, 50), "registration 0, offset 100");
        assertEquals(-1L, zero.locate(mine, 8000, 500), "past the registration's end");
        assertEquals(-1L, zero.locate(theirs, 0, 8), "another member's buffer is not this member's");
        assertEquals(-1L, zero.locate(ByteBuffer.allocateDirect(64), 0, 8));
        assertNull(zero.memory(1, 1), "no registration 1");
    }

    @Test
    void anAbandonedRegistrationLeavesNoFileEvenOfAMemberThatDiedMakingIt() throws Exception
    {
        final ShmCluster cluster = cluster().arenaSize(64 * 1024);
        final ShmTransport[] t = cluster.connected(new RecordingInbound[2]);
        assertNotNull(t[0].nodeArena().registeredMemory().create(8192));
        assertNotNull(t[1].nodeArena().registeredMemory().create(8192)); // rank 1 goes no further
        assertEquals(2, cluster.files().size());
        assertFalse(t[0].nodeArena().registeredMemory().conclude(false));
        assertEquals(List.of(), cluster.files(), "files left in " + cluster.dir);
    }

    @Test
    void aTruncatedArenaSaysWhatIsWrongAndMarkingItFailedDoesNotFault() throws Exception
    {
        // Another process of the user's shrinks the arena's file after every member mapped it (through the member's
        // open descriptor: the name is gone). Its pages fault now; marking the arena failed must not touch them.
        final ShmCluster cluster = cluster().arenaSize(64 * 1024);
        final ShmTransport[] t = cluster.connected(new RecordingInbound[2]);
        final ShmArena arena = t[0].nodeArena();
        assertNull(arena.damage(), "a whole arena");
        final long bytes = ShmArena.fileBytes(2, 64 * 1024);
        final List<Path> open = OpenFiles.deletedOfSize(cluster.dir, bytes);
        assertFalse(open.isEmpty(), "no open deleted file of " + bytes + " bytes in " + cluster.dir);
        final Path descriptor = open.get(0);
        try (FileChannel c = FileChannel.open(descriptor, StandardOpenOption.WRITE))
        {
            c.truncate(0);
        }
        final String damage = arena.damage();
        assertNotNull(damage, "the truncation is seen from the file's size");
        assertTrue(damage.startsWith("the node arena's shared memory is truncated: its file " + cluster.dir) &&
            damage.contains(" holds 0 bytes where its layout needs " + bytes + ", so its memory faults") &&
            damage.endsWith("while jobs run"), damage);
        arena.markFailed();
        t[1].nodeArena().markFailed();
        assertEquals(damage, t[1].nodeArena().damage(), "every member sees it");
    }
}
