package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.ReduceOp;
import dev.hccl.transport.shm.ShmTransportProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Damage to the node arena's memory by another process of the user's is an error that says so on every rank, as it
 * is for a pair's segment: a file truncated under the mapping, whose pages then fault (SIGBUS), fails the next
 * operation with {@code E_SHM_SEGMENT}, and the JVM goes on (marking the arena failed must not touch the memory).
 */
@Timeout(120)
class ArenaDamageTest
{
    private static final int RANKS = 2;
    private static final int ARENA_BYTES = 64 * 1024;
    /** The arena's file: every member's region, then its failure line. */
    private static final long ARENA_FILE_BYTES = (long)RANKS * ARENA_BYTES + 64;

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
        final int port = TcpConformanceTest.freePort();
        final List<Communicator> comms = Ranks.run(RANKS, 60, rank -> Hccl.init(CommConfig.builder()
            .environment(Map.of()).rank(rank).worldSize(RANKS).masterAddr("127.0.0.1").masterPort(port)
            .set(ShmTransportProvider.DIR, dir.toString()).set(ShmTransportProvider.ARENA_SIZE, ARENA_BYTES)
            .algo("arena").connectTimeout(Duration.ofSeconds(30)).execTimeout(Duration.ofSeconds(30)).conclude()));
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
    }

    /** The descriptors, in /proc/self/fd, of this process's open deleted files of the directory at a size. */
    private List<Path> openDeletedFilesOfSize(final long bytes) throws IOException
    {
        final List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd")))
        {
            for (final Path fd : fds)
            {
                try
                {
                    final String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith(dir.toString()) && target.endsWith("(deleted)") && Files.size(fd) == bytes)
                    {
                        found.add(fd);
                    }
                }
                catch (final IOException gone)
                {
                    // closed meanwhile, or not a file
                }
            }
        }
        assertFalse(found.isEmpty(), "no open deleted file of " + bytes + " bytes in " + dir);
        return found;
    }
}
