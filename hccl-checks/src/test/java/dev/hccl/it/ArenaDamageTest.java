package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.testing.OpenFiles;
import dev.hccl.transport.shm.ShmTransportProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Damage to the node arena's memory by another process of the user's is an error that says so on every rank, as it
 * is for a pair's segment: a file truncated under the mapping, whose pages then fault (SIGBUS), fails the next
 * operation with {@code E_SHM_SEGMENT}, and the JVM goes on (marking the arena failed must not touch the memory); under
 * {@code HCCL_CHECKSUM}, bytes changed in it fail the operation instead of its sum.
 */
@Timeout(120)
class ArenaDamageTest
{
    private static final int RANKS = 2;
    private static final int ARENA_BYTES = 64 * 1024;
    /** The arena's file: every member's region, then its failure line. */
    private static final int ARENA_FILE_BYTES = RANKS * ARENA_BYTES + 64;
    /** Where a region's data halves start: after its signals and operation lines (ArenaSteps.CONTROL_BYTES). */
    private static final int DATA_START = 4 * 64;
    /** The halves' bytes: up to the CRC32Cs at the region's end, a line per step parity for two members. */
    private static final int DATA_BYTES = ARENA_BYTES - DATA_START - 2 * 64;

    private Path dir;

    @BeforeEach
    void makeDirectory() throws IOException
    {
        dir = Files.createTempDirectory(RealProcessTest.shmParent(), "hccl-arena-damage-");
    }

    @AfterEach
    void removeDirectory() throws IOException
    {
        RealProcessTest.removeDirectory(dir);
    }

    @Test
    void aTruncatedArenaFailsTheNextOperationOnEveryRankAsDamagedSharedMemory() throws Exception
    {
        final List<Communicator> comms = communicators(false);
        try
        {
            Ranks.onEach(comms, 60, comm ->
            {
                final ByteBuffer b = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
                comm.allReduce(b, b, 16, DataType.FP32, ReduceOp.SUM);
                return null;
            });
            final List<Path> arenas = openDeletedFilesOfSize(ARENA_FILE_BYTES);
            assertEquals(RANKS, arenas.size(), "each rank holds the arena's file open: " + arenas);
            try (FileChannel c = FileChannel.open(arenas.get(0), StandardOpenOption.WRITE))
            {
                c.truncate(0);
            }
            final List<HcclException> errors = Ranks.onEach(comms, 60, comm -> assertThrows(HcclException.class,
                () ->
                {
                    final ByteBuffer b = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
                    comm.allReduce(b, b, 16, DataType.FP32, ReduceOp.SUM);
                    comm.barrier();
                }));
            for (final HcclException e : errors)
            {
                assertTrue(e.getMessage().contains("the node arena's shared memory is truncated: its file " + dir) &&
                    e.getMessage().contains("holds 0 bytes where its layout needs " + ARENA_FILE_BYTES + ","),
                    e.getMessage());
            }
            assertTrue(errors.stream().allMatch(e -> e.errorCode() == ErrorCode.E_SHM_SEGMENT ||
                e.errorCode() == ErrorCode.E_REMOTE), errors.toString());
            assertTrue(errors.stream().anyMatch(e -> e.errorCode() == ErrorCode.E_SHM_SEGMENT), errors.toString());
        }
        finally
        {
            closeAll(comms);
        }
    }

    /**
     * Bytes changed in the arena's data by another process of the user's while the ranks all-reduce: under
     * {@code HCCL_CHECKSUM} each rank checks what it reads against the CRC32C its writer covered it with, so every rank
     * fails instead of returning a wrong sum (without the checksum, such flips gave hundreds of wrong results).
     */
    @Test
    void bytesChangedInTheArenaUnderTheChecksumFailEveryRankAndNoneReturnsAWrongSum() throws Exception
    {
        final List<Communicator> comms = communicators(true);
        final AtomicBoolean flipping = new AtomicBoolean(true);
        final AtomicInteger wrong = new AtomicInteger();
        final AtomicLong flips = new AtomicLong();
        Thread flipper = null;
        try
        {
            allReduceOnEach(comms, 1, wrong);
            final Path arena = openDeletedFilesOfSize(ARENA_FILE_BYTES).get(0);
            final MappedByteBuffer memory;
            try (FileChannel c = FileChannel.open(arena, StandardOpenOption.READ, StandardOpenOption.WRITE))
            {
                memory = c.map(FileChannel.MapMode.READ_WRITE, 0, ARENA_FILE_BYTES);
            }
            // Only the data halves of each region, after its control lines and before its CRCs: what is found then is
            // found by the checksum, not by a control line that holds what no rank writes.
            flipper = new Thread(() ->
            {
                final Random random = new Random(42);
                while (flipping.get())
                {
                    final int at = random.nextInt(RANKS) * ARENA_BYTES + DATA_START + random.nextInt(DATA_BYTES);
                    memory.put(at, (byte)(memory.get(at) ^ (1 + random.nextInt(255))));
                    flips.incrementAndGet();
                }
            }, "flipper");
            flipper.setDaemon(true);
            flipper.start();
            final List<HcclException> errors = Ranks.onEach(comms, 100, comm -> assertThrows(HcclException.class,
                () -> allReduce(comm, 200_000, wrong), "the flips went unnoticed"));
            flipping.set(false);
            assertEquals(0, wrong.get(), "wrong sums returned after " + flips.get() + " flips: " + errors);
            assertTrue(errors.stream().allMatch(e -> e.errorCode() == ErrorCode.E_SHM_SEGMENT ||
                e.errorCode() == ErrorCode.E_REMOTE), errors.toString());
            assertTrue(errors.stream().anyMatch(e -> e.errorCode() == ErrorCode.E_SHM_SEGMENT &&
                e.getMessage().contains("the node arena's shared memory (" + dir) &&
                e.getMessage().contains("does not match the CRC32C rank ") &&
                e.getMessage().contains("(HCCL_CHECKSUM), so the bytes changed after it wrote them")), errors.toString());
        }
        finally
        {
            flipping.set(false);
            if (flipper != null)
            {
                flipper.join(10_000);
            }
            closeAll(comms);
        }
    }

    /**
     * A control line that holds what no rank writes is corruption too, with or without the checksum: rank 1's POSTED
     * signal far ahead of any step would otherwise let rank 0 read a half rank 1 never wrote.
     */
    @Test
    void aSignalNoRankCanHaveWrittenFailsTheOperationAsCorruption() throws Exception
    {
        final List<Communicator> comms = communicators(false);
        try
        {
            allReduceOnEach(comms, 1, new AtomicInteger());
            final Path arena = openDeletedFilesOfSize(ARENA_FILE_BYTES).get(0);
            try (FileChannel c = FileChannel.open(arena, StandardOpenOption.READ, StandardOpenOption.WRITE))
            {
                // Rank 1's POSTED signal: the first long of its region.
                c.map(FileChannel.MapMode.READ_WRITE, 0, ARENA_FILE_BYTES).order(ByteOrder.nativeOrder())
                    .putLong(ARENA_BYTES, 1L << 40);
            }
            final AtomicInteger wrong = new AtomicInteger();
            final HcclException first = assertThrows(HcclException.class, () -> allReduce(comms.get(0), 1, wrong));
            assertEquals(ErrorCode.E_SHM_SEGMENT, first.errorCode(), first.toString());
            assertTrue(first.getMessage().contains("is corrupted: rank 1's POSTED signal holds " + (1L << 40) +
                " while this rank takes step ") && first.getMessage().contains("no rank wrote it"), first.getMessage());
            final HcclException second = assertThrows(HcclException.class, () -> allReduce(comms.get(1), 1, wrong));
            assertEquals(ErrorCode.E_REMOTE, second.errorCode(), second.toString());
            assertEquals(0, wrong.get());
        }
        finally
        {
            closeAll(comms);
        }
    }

    private List<Communicator> communicators(final boolean checksum) throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        return Ranks.run(RANKS, 60, rank -> Hccl.init(CommConfig.builder()
            .environment(Map.of()).rank(rank).worldSize(RANKS).masterAddr("127.0.0.1").masterPort(port)
            .set(ShmTransportProvider.DIR, dir.toString()).set(ShmTransportProvider.ARENA_SIZE, ARENA_BYTES)
            .set(CommConfig.CHECKSUM, checksum).algo("arena").connectTimeout(Duration.ofSeconds(30))
            .execTimeout(Duration.ofSeconds(30)).conclude()));
    }

    private static void allReduceOnEach(final List<Communicator> comms, final int times, final AtomicInteger wrong)
        throws Exception
    {
        Ranks.onEach(comms, 60, comm ->
        {
            allReduce(comm, times, wrong);
            return null;
        });
    }

    /** All-reduces 1,024 floats of known values {@code times} times, counting the sums that come out wrong. */
    private static void allReduce(final Communicator comm, final int times, final AtomicInteger wrong)
    {
        final int count = 1024;
        final ByteBuffer b = ByteBuffer.allocateDirect(count * Float.BYTES).order(ByteOrder.nativeOrder());
        for (int t = 0; t < times; t++)
        {
            for (int i = 0; i < count; i++)
            {
                b.putFloat(i * Float.BYTES, comm.rank() + 1 + i % 7);
            }
            comm.allReduce(b, b, count, DataType.FP32, ReduceOp.SUM);
            for (int i = 0; i < count; i++)
            {
                if (b.getFloat(i * Float.BYTES) != RANKS * (RANKS + 1) / 2f + RANKS * (i % 7))
                {
                    wrong.incrementAndGet();
                    break;
                }
            }
        }
    }

    private static void closeAll(final List<Communicator> comms)
    {
        for (final Communicator c : comms)
        {
            try
            {
                c.close();
            }
            catch (final HcclException expected)
            {
                // failed above
            }
        }
    }

    /** The descriptors, in /proc/self/fd, of this process's open deleted files of the directory at a size. */
    private List<Path> openDeletedFilesOfSize(final long bytes) throws IOException
    {
        final List<Path> found = OpenFiles.deletedOfSize(dir, bytes);
        assertFalse(found.isEmpty(), "no open deleted file of " + bytes + " bytes in " + dir);
        return found;
    }
}
