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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code Communicator.allocateRegistered} over real shared memory, ranks as threads of this JVM: every rank maps
 * every other rank's buffer of each registration, nothing stays in the directory, collectives on the buffers (and on
 * slices of them) give the reference's results in place and out of place, sizes that differ fail on every rank, and
 * where there is no node arena the buffers are ordinary and work alike.
 */
@Timeout(180)
class RegisteredBufferTest
{
    private static final int RANKS = 3;
    /** Above the size from which the arena reads registered buffers in place, and several of its steps. */
    private static final int COUNT = 300_000;
    private static final int BYTES = COUNT * Float.BYTES;

    private Path dir;

    @BeforeEach
    void makeDirectory() throws IOException
    {
        dir = Files.createTempDirectory(RealProcessTest.shmParent(), "hccl-registered-");
    }

    @AfterEach
    void removeDirectory() throws IOException
    {
        RealProcessTest.removeDirectory(dir);
    }

    private List<Communicator> open(final boolean sharedMemory) throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        return Ranks.run(RANKS, 120, rank -> Hccl.init(CommConfig.builder().environment(Map.of()).rank(rank)
            .worldSize(RANKS).masterAddr("127.0.0.1").masterPort(port).set(ShmTransportProvider.DIR, dir.toString())
            .set(ShmTransportProvider.DISABLE, !sharedMemory).algo("arena").connectTimeout(Duration.ofSeconds(60))
            .execTimeout(Duration.ofSeconds(60)).conclude()));
    }

    @Test
    void everyRankMapsEveryRanksBufferAndCollectivesOnThemAreRight() throws Exception
    {
        final List<Communicator> comms = open(true);
        try
        {
            final long before = sharedMappings();
            final List<ByteBuffer[]> buffers = Ranks.onEach(comms, 120, comm -> new ByteBuffer[] {
                comm.allocateRegistered(BYTES), comm.allocateRegistered(BYTES) });
            // Two registrations of three ranks, each mapped by each rank (all threads of this process).
            assertEquals(2 * RANKS * RANKS, sharedMappings() - before, "mappings of the directory's files");
            try (Stream<Path> files = Files.list(dir))
            {
                assertEquals(List.of(), files.filter(f -> !f.getFileName().toString().startsWith(".")).toList(),
                    "files left in " + dir);
            }
            for (final ByteBuffer[] b : buffers)
            {
                assertTrue(b[0].isDirect() && b[0].order() == ByteOrder.nativeOrder() && b[0].capacity() == BYTES &&
                    b[0].position() == 0 && b[0].limit() == BYTES, b[0].toString());
                assertEquals(0, b[0].getLong(BYTES - Long.BYTES), "a fresh buffer holds zeros");
            }
            for (int round = 0; round < 3; round++)
            {
                final int r = round;
                Ranks.onEach(comms, 120, comm ->
                {
                    final ByteBuffer send = buffers.get(comm.rank())[0];
                    final ByteBuffer recv = buffers.get(comm.rank())[1];
                    fill(send, comm.rank(), r);
                    comm.allReduce(send, recv, COUNT, DataType.FP32, ReduceOp.SUM);
                    expectSum(recv, 0, COUNT, r, "out of place, round " + r + ", rank " + comm.rank());
                    // In place, on a slice: registered memory too.
                    final ByteBuffer slice = recv.slice(4096, BYTES - 4096).order(ByteOrder.nativeOrder());
                    fill(slice, comm.rank(), r + 1);
                    comm.allReduce(slice, slice, COUNT - 1024, DataType.FP32, ReduceOp.SUM);
                    expectSum(slice, 0, COUNT - 1024, r + 1, "in place on a slice, round " + r + ", rank " +
                        comm.rank());
                    // Gathered into the other buffer: every rank's block, read where it lies.
                    final int block = COUNT / RANKS;
                    fill(send.slice(0, block * Float.BYTES).order(ByteOrder.nativeOrder()), comm.rank(), r);
                    comm.allGather(send, recv, block, DataType.FP32);
                    for (int owner = 0; owner < RANKS; owner++)
                    {
                        final float expected = value(owner, r, block - 1);
                        assertEquals(expected, recv.getFloat((owner * block + block - 1) * Float.BYTES),
                            "all-gather, block of rank " + owner);
                    }
                    return null;
                });
            }
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    @Test
    void ranksThatAskForDifferentSizesFailAlikeAndWithoutAnArenaTheBuffersAreOrdinary() throws Exception
    {
        final List<Communicator> comms = open(false);
        try
        {
            final List<HcclException> failures = Ranks.onEach(comms, 120, comm -> assertThrows(HcclException.class,
                () -> comm.allocateRegistered(comm.rank() == 1 ? 8192 : 4096)));
            for (final HcclException ex : failures)
            {
                assertEquals(ErrorCode.E_PARA, ex.errorCode(), ex.getMessage());
                assertTrue(ex.getMessage().contains("from 4096 to 8192 bytes"), ex.getMessage());
            }
            Ranks.onEach(comms, 120, comm ->
            {
                assertThrows(IllegalArgumentException.class, () -> comm.allocateRegistered(0));
                final ByteBuffer b = comm.allocateRegistered(BYTES);
                fill(b, comm.rank(), 5);
                comm.allReduce(b, b, COUNT, DataType.FP32, ReduceOp.SUM);
                expectSum(b, 0, COUNT, 5, "over TCP, rank " + comm.rank());
                return null;
            });
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    /** Mappings of this process of files in the test's directory: deleted once mapped, as they should be. */
    private long sharedMappings() throws IOException
    {
        try (Stream<String> lines = Files.lines(Path.of("/proc/self/maps")))
        {
            return lines.filter(l -> l.contains(dir.toString() + "/")).count();
        }
    }

    private static float value(final int rank, final int round, final int element)
    {
        return rank * 1000 + round * 10 + element % 7;
    }

    private static void fill(final ByteBuffer b, final int rank, final int round)
    {
        for (int e = 0; e < b.capacity() / Float.BYTES; e++)
        {
            b.putFloat(e * Float.BYTES, value(rank, round, e));
        }
    }

    private static void expectSum(final ByteBuffer b, final int from, final int count, final int round,
        final String what)
    {
        for (int e = from; e < count; e++)
        {
            float sum = 0;
            for (int r = 0; r < RANKS; r++)
            {
                sum += value(r, round, e);
            }
            if (b.getFloat(e * Float.BYTES) != sum)
            {
                throw new AssertionError(what + ": element " + e + " is " + b.getFloat(e * Float.BYTES) +
                    ", not " + sum);
            }
        }
    }
}
