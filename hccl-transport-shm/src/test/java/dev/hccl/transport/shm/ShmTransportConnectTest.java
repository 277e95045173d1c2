package dev.hccl.transport.shm;

import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.PeerEndpoint;
import dev.hccl.api.spi.Request;
import dev.hccl.api.testing.RecordingInbound;
import dev.hccl.api.testing.Tee;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The handshake: pairs set up through the bootstrap, nothing left in the directory, private files, timeouts, a
 * directory without room, and which peers can connect.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmTransportConnectTest
{
    private static final OpDescriptor ALL_REDUCE =
        new OpDescriptor(Operation.ALL_REDUCE, DataType.FP32, ReduceOp.SUM, OpDescriptor.NO_ROOT, 1000);

    /** The uid of {@code nobody}: the owner of files that another user planted. */
    private static final int NOBODY_UID = 65534;

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
    void afterConnectNothingOfTheJobIsLeftInTheDirectory() throws Exception
    {
        final ShmCluster cluster = cluster();
        final Path file = cluster.file(0, 1);
        final List<String> existedWhen = new java.util.concurrent.CopyOnWriteArrayList<>();
        cluster.bootstrap.onPut = (key, value) ->
        {
            if (Files.exists(file))
            {
                existedWhen.add(key);
            }
        };
        final RecordingInbound[] in = new RecordingInbound[2];
        final ShmTransport[] t = cluster.connected(in);
        // The higher rank unlinks the file before it answers: a lower rank killed after that leaves nothing.
        assertEquals(List.of("0-1/created"), existedWhen, "the file was still there when these keys were put");
        assertEquals(List.of(), cluster.files(), "files left in " + cluster.dir + " after connect");
        final Map<String, byte[]> keys = cluster.bootstrap.snapshot();
        assertEquals("ok " + ShmCluster.TEST_RING_BYTES, utf8(keys.get("0-1/created")));
        assertEquals("ok", utf8(keys.get("0-1/mapped")));

        // The unlinked segment still carries messages.
        final Request r = ShmCluster.send(t[0], 1, 1, 1, ALL_REDUCE, ByteBuffer.allocate(1000));
        ShmCluster.drive(t[1], () -> !in[1].messages.isEmpty());
        ShmCluster.assertOk(r);
        t[0].close();
        t[1].close();
        assertEquals(List.of(), cluster.files());
    }

    /** Three ranks, started in reverse order with pauses between: the phases cannot deadlock. */
    @Test
    void threeRanksConnectPairwiseInAnyOrder() throws Exception
    {
        final ShmCluster cluster = cluster();
        final RecordingInbound[] in = new RecordingInbound[3];
        final ShmTransport[] t = new ShmTransport[3];
        for (int r = 0; r < 3; r++)
        {
            t[r] = cluster.open(r, 3, in[r] = new RecordingInbound());
        }
        final List<Future<Set<Integer>>> connects = new ArrayList<>();
        for (int r = 0; r < 3; r++)
        {
            connects.add(cluster.connectAsync(t, r, 200L * (2 - r)));
        }
        assertEquals(Set.of(1, 2), connects.get(0).get(30, TimeUnit.SECONDS));
        assertEquals(Set.of(0, 2), connects.get(1).get(30, TimeUnit.SECONDS));
        assertEquals(Set.of(0, 1), connects.get(2).get(30, TimeUnit.SECONDS));
        assertEquals(List.of(), cluster.files());

        // Around the ring, each rank driving its own engine.
        final List<Future<Request>> sends = new ArrayList<>();
        for (int r = 0; r < 3; r++)
        {
            final int me = r;
            sends.add(cluster.async(() ->
            {
                final Request req = ShmCluster.send(t[me], (me + 1) % 3, me, 0, ALL_REDUCE,
                    ByteBuffer.allocate(300_000));
                ShmCluster.drive(t[me], () -> req.isDone() && !in[me].messages.isEmpty());
                return req;
            }));
        }
        for (final Future<Request> f : sends)
        {
            ShmCluster.assertOk(f.get(30, TimeUnit.SECONDS));
        }
        for (int r = 0; r < 3; r++)
        {
            assertEquals((r + 2) % 3, in[r].nextMessage().from());
        }
    }

    /** The lower rank's file is owner-only and fully allocated while it waits; its wait times out, leaving nothing. */
    @Test
    void aHigherRankThatNeverMapsTimesOutTheLowerAndItsFileIsPrivateMeanwhile() throws Exception
    {
        final ShmCluster cluster = cluster();
        final ShmTransport t0 = cluster.open(0, 2, new RecordingInbound());
        final ShmTransport t1 = cluster.open(1, 2, new RecordingInbound());
        final Future<Set<Integer>> c0 = cluster.connectAsync(
            t0, ShmCluster.endpoint(0, t0), List.of(ShmCluster.endpoint(1, t1)), 0, 1_500);

        final Path file = cluster.file(0, 1);
        final long size = ShmSegment.fileBytes(ShmCluster.TEST_RING_BYTES);
        final long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        // The file exists from its creation on and grows as it is written through: wait for the whole of it.
        while (!(Files.exists(file) && Files.size(file) == size) && System.nanoTime() - until < 0)
        {
            Thread.sleep(5);
        }
        assertTrue(Files.exists(file), "rank 0 did not create " + file);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        assertEquals(size, Files.size(file));
        assertTrue(allocatedBytes(file) >= size, "the file is sparse: " + allocatedBytes(file) + " of " + size);

        final HcclException ex = timeoutOf(c0);
        assertEquals(1, ex.peer());
        assertTrue(ex.getMessage().contains("rank 1 did not answer the shared-memory handshake"), ex.getMessage());
        assertEquals(List.of(), cluster.files());
    }

    @Test
    void aLowerRankThatNeverCreatesTimesOutTheHigher() throws Exception
    {
        final ShmCluster cluster = cluster();
        final ShmTransport t0 = cluster.open(0, 3, new RecordingInbound());
        final ShmTransport t1 = cluster.open(1, 3, new RecordingInbound());
        final ShmTransport t2 = cluster.open(2, 3, new RecordingInbound());
        // Rank 1 is lower than 2 (it creates that pair's file) and higher than 0, which never connects.
        final Future<Set<Integer>> c1 = cluster.connectAsync(t1, ShmCluster.endpoint(1, t1),
            List.of(ShmCluster.endpoint(0, t0), ShmCluster.endpoint(2, t2)), 0, 700);
        final HcclException ex = timeoutOf(c1);
        assertEquals(0, ex.peer());
        assertTrue(ex.getMessage().contains("rank 0 did not answer the shared-memory handshake"), ex.getMessage());
        assertEquals(List.of(), cluster.files(), "rank 1's file for the pair with rank 2 was left behind");
    }

    /**
     * A lower rank that died after creating the pair's file but before saying so: the higher rank times out naming it
     * and removes the file, which nobody else would.
     */
    @Test
    void aLowerRankThatDiesAfterCreatingItsFileLeavesNothingBehind() throws Exception
    {
        final ShmCluster cluster = cluster();
        final ShmTransport t0 = cluster.open(0, 2, new RecordingInbound());
        final ShmTransport t1 = cluster.open(1, 2, new RecordingInbound());
        Files.createFile(cluster.file(0, 1)); // rank 0's, then it died
        final Future<Set<Integer>> c1 = cluster.connectAsync(t1, ShmCluster.endpoint(1, t1),
            List.of(ShmCluster.endpoint(0, t0)), 0, 700);
        final HcclException ex = timeoutOf(c1);
        assertEquals(0, ex.peer());
        assertEquals(List.of(), cluster.files(), "the dead rank's file was left behind");
    }

    /**
     * Another user who created pairs' files first (planted here at the names the job computes, as nobody without the
     * token could) costs only those pairs: a planted file is never adopted nor removed, each lower rank falls back on
     * each pair taken, with one WARN in the whole job (two ranks meet a planted file here) naming a file and its owner,
     * and the other pairs connect.
     */
    @Test
    void filesPlantedAtThePairsNamesAreNotAdoptedAndWarnOncePerJobNamingTheirOwner() throws Exception
    {
        final ShmCluster cluster = cluster();
        final List<Path> planted = List.of(cluster.file(0, 1), cluster.file(1, 2));
        for (final Path p : planted)
        {
            Files.writeString(p, "planted");
            if ("0".equals(run("id", "-u").trim()))
            {
                Files.setAttribute(p, "unix:uid", NOBODY_UID); // as another user would own it
            }
        }
        final ShmTransport[] t = new ShmTransport[3];
        for (int r = 0; r < 3; r++)
        {
            t[r] = cluster.open(r, 3, new RecordingInbound());
        }
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        final List<Set<Integer>> sets = withStderrTo(captured, () -> cluster.connectAll(t));
        final String log = captured.toString(StandardCharsets.UTF_8);

        assertEquals(List.of(Set.of(2), Set.of(), Set.of(0)), sets, "who connected to whom");
        for (final Path p : planted)
        {
            assertEquals("planted", Files.readString(p), "the planted " + p + " was written to");
        }
        assertEquals(planted.stream().map(p -> p.getFileName().toString()).sorted().toList(), cluster.files());
        final List<String> warnings = log.lines().filter(l -> l.contains("WARN")).toList();
        assertEquals(1, warnings.size(), "warnings: " + log);
        final String owner = Files.getOwner(planted.get(0)).getName();
        assertTrue(planted.stream().anyMatch(p -> warnings.get(0).contains(p + " exists already, owned by " + owner)),
            log);
        assertTrue(warnings.get(0).contains("falls back to TCP") && warnings.get(0).contains("HCCL_SHM_DIR"), log);
    }

    /**
     * A directory too small for a segment: both ranks of the pair fall back (an empty set), the lower warns how to
     * fix it, nothing is left, and nothing crashes. A segment that fits there connects.
     */
    @Test
    void aDirectoryWithoutRoomMakesBothRanksFallBack() throws Exception
    {
        final Path mount = Files.createTempDirectory("hccl-shm-small-");
        mountTmpfs(mount, "1m");
        Throwable primary = null;
        try
        {
            final ShmCluster small = new ShmCluster(mount, 0xABCL);
            toClose.add(small);
            final RecordingInbound[] in = new RecordingInbound[2];
            final ShmTransport t0 = small.open(0, 2, in[0] = new RecordingInbound(), 1 << 20, 8_000);
            final ShmTransport t1 = small.open(1, 2, in[1] = new RecordingInbound(), 1 << 20, 8_000);

            final ByteArrayOutputStream captured = new ByteArrayOutputStream();
            final List<Set<Integer>> sets = withStderrTo(captured, () -> small.connectAll(new ShmTransport[] {t0, t1}));
            final String log = captured.toString(StandardCharsets.UTF_8);

            assertEquals(List.of(Set.of(), Set.of()), sets);
            final Path file = small.file(0, 1);
            assertTrue(log.contains("WARN") && log.contains(file.toString()), "no warning naming the file: " + log);
            assertTrue(log.contains(ShmSegment.fileBytes(1 << 20) + " bytes needed"), log);
            assertTrue(log.contains("HCCL_SHM_DIR") && log.contains("--shm-size"), log);
            assertEquals(List.of(), small.files());
            assertThrows(IllegalStateException.class, () -> t0.link(1));
            assertThrows(IllegalStateException.class, () -> t1.link(0));
            t0.close();
            t1.close();

            // The mount itself works: rings that fit connect.
            final ShmCluster fits = new ShmCluster(mount, 0xABDL);
            toClose.add(fits);
            final ShmTransport u0 = fits.open(0, 2, new RecordingInbound(), 64 * 1024, 8_000);
            final ShmTransport u1 = fits.open(1, 2, new RecordingInbound(), 64 * 1024, 8_000);
            assertEquals(List.of(Set.of(1), Set.of(0)), fits.connectAll(new ShmTransport[] {u0, u1}));
            assertEquals(List.of(), fits.files());
            u0.close();
            u1.close();
        }
        catch (final Throwable t)
        {
            primary = t;
            throw t;
        }
        finally
        {
            tearDown();
            toClose.clear();
            final String problem = unmount(mount);
            if (null != problem)
            {
                if (null == primary)
                {
                    fail(problem);
                }
                primary.addSuppressed(new AssertionError(problem));
            }
        }
    }

    @Test
    void canConnectOnlyOnTheSameNodeAndDirectory() throws Exception
    {
        final ShmCluster cluster = cluster();
        final ShmTransport t0 = cluster.open(0, 2, new RecordingInbound());
        final ShmTransport t1 = cluster.open(1, 2, new RecordingInbound());
        final PeerEndpoint e0 = ShmCluster.endpoint(0, t0);
        final PeerEndpoint e1 = ShmCluster.endpoint(1, t1);
        assertTrue(t0.canConnect(e0, e1));
        assertTrue(t1.canConnect(e1, e0));

        final PeerEndpoint elsewhere = new PeerEndpoint(1, "node-b", t1.localAddress());
        assertFalse(t0.canConnect(e0, elsewhere));
        assertFalse(t1.canConnect(elsewhere, e0), "not symmetric");

        final ShmCluster other = cluster();
        final ShmTransport t2 = other.open(1, 2, new RecordingInbound());
        final PeerEndpoint otherDir = ShmCluster.endpoint(1, t2);
        assertFalse(t0.canConnect(e0, otherDir));
        assertFalse(t2.canConnect(otherDir, e0), "not symmetric");

        assertFalse(t0.canConnect(e0, new PeerEndpoint(1, ShmCluster.NODE, null)));
        assertFalse(t0.canConnect(e0, new PeerEndpoint(1, ShmCluster.NODE, new byte[0])));
        assertFalse(t0.canConnect(e0, new PeerEndpoint(1, ShmCluster.NODE, "tcp:1.2.3.4".getBytes())));
        assertThrows(IllegalArgumentException.class, () -> t0.connect(e0, List.of(elsewhere), System.nanoTime()));
    }

    // ------------------------------------------------------------------------------------------ support

    /** Runs {@code body} with what goes to stderr (the test logger's output) copied into {@code captured}. */
    private static <T> T withStderrTo(final ByteArrayOutputStream captured, final Callable<T> body) throws Exception
    {
        final PrintStream stderr = System.err;
        System.setErr(new PrintStream(new Tee(stderr, captured), true, StandardCharsets.UTF_8));
        try
        {
            return body.call();
        }
        finally
        {
            System.setErr(stderr);
        }
    }

    private static HcclException timeoutOf(final Future<?> f) throws Exception
    {
        try
        {
            f.get(30, TimeUnit.SECONDS);
        }
        catch (final ExecutionException ex)
        {
            final HcclException h = assertInstanceOf(HcclException.class, ex.getCause());
            assertEquals(ErrorCode.E_TIMEOUT, h.errorCode());
            return h;
        }
        return fail("connect did not time out");
    }

    private static long allocatedBytes(final Path file) throws Exception
    {
        final String[] blocks = run("stat", "-c", "%b %B", file.toString()).trim().split(" ");
        return Long.parseLong(blocks[0]) * Long.parseLong(blocks[1]);
    }

    /** Mounts a tmpfs of the given size, as root; fails the test, saying why, when it cannot. */
    private static void mountTmpfs(final Path dir, final String size) throws Exception
    {
        final String uid = run("id", "-u").trim();
        if (!"0".equals(uid))
        {
            fail("this test mounts a small tmpfs and must run as root (uid 0), not uid " + uid);
        }
        final Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", dir.toString())
            .redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(20, TimeUnit.SECONDS) || 0 != p.exitValue())
        {
            fail("this test needs a " + size + " tmpfs at " + dir + " and could not mount one (root without " +
                "CAP_SYS_ADMIN, in a container?): " + out.trim());
        }
    }

    /**
     * Unmounts, detaching lazily when the mount is busy (a mapping or a descriptor still open), and removes the
     * mount point.
     *
     * @return null, or what kept the mount busy.
     */
    private static String unmount(final Path dir) throws Exception
    {
        final Process p = new ProcessBuilder("umount", dir.toString()).redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String problem = null;
        if (!p.waitFor(20, TimeUnit.SECONDS) || 0 != p.exitValue())
        {
            problem = "umount " + dir + " failed (a mapping or a descriptor of this JVM still open there?): " +
                out.trim();
            run("umount", "-l", dir.toString());
        }
        Files.deleteIfExists(dir);
        return problem;
    }

    private static String run(final String... command) throws Exception
    {
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(20, TimeUnit.SECONDS) || 0 != p.exitValue())
        {
            fail(String.join(" ", command) + " failed: " + out);
        }
        return out;
    }

    private static String utf8(final byte[] b)
    {
        return null == b ? null : new String(b, StandardCharsets.UTF_8);
    }
}
