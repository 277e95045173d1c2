package dev.hccl.transport.shm;

import dev.hccl.api.CommConfig;
import dev.hccl.api.spi.Bootstrap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;

/**
 * Agrees on a node arena ({@link ShmArena}) among the ranks that share memory, through the bootstrap store, after the
 * pairs are connected, in three rounds that each wait only for keys the others write before waiting themselves:
 * <ol>
 *     <li><b>View.</b> Each rank publishes {@code arena-view/<rank>}: the ranks it connected over shared memory and
 *     itself, or {@code off} when its arena is turned off. The arena's members are those ranks when every one of them
 *     published the same view; else there is none. Every member decides from the same keys, so all decide alike, and
 *     a rank whose pairs failed apart from the others' (a segment that did not fit) leaves its view without an
 *     arena rather than with a partial one.</li>
 *     <li><b>Created.</b> The lowest member creates the file and publishes {@code arena-<lowest>/created}
 *     ({@code ok <regionBytes>} or {@code fail}); the others map it.</li>
 *     <li><b>Mapped.</b> Every member but the lowest publishes {@code arena-<lowest>/mapped-<rank>} ({@code ok} or
 *     {@code fail}) and every member reads them all: the arena exists when every one mapped it. The lowest then
 *     unlinks the file, so that nothing stays in the directory however the processes end.</li>
 * </ol>
 * Then the members agree whether they read each other's ordinary memory across processes ({@link CmaHandshake}).
 * A member that does not answer by the deadline fails the rank, as in the pairs' handshake ({@link ShmHandshake}).
 */
final class ArenaHandshake
{
    private static final Logger LOG = LoggerFactory.getLogger(ArenaHandshake.class);
    private static final String OFF = "off";
    private static final String OK = "ok";
    private static final String FAIL = "fail";

    private final int rank;
    private final ShmNames names;
    private final Path dir;
    private final Bootstrap bootstrap;
    /** The pairs' handshake, whose waits, deletions and figures this one shares. */
    private final ShmHandshake pairs;
    /** {@code HCCL_CHECKSUM}, as every rank sets it: the arena's operations cover what they read. */
    private final boolean checksum;
    /** {@code HCCL_CMA}. */
    private final boolean cma;

    /**
     * @param rank      this rank.
     * @param names     the names of the job's files.
     * @param dir       the directory.
     * @param bootstrap the rendezvous store.
     * @param pairs     the pairs' handshake, done.
     * @param checksum  {@code HCCL_CHECKSUM}.
     * @param cma       {@code HCCL_CMA}.
     */
    ArenaHandshake(final int rank, final ShmNames names, final Path dir, final Bootstrap bootstrap,
        final ShmHandshake pairs, final boolean checksum, final boolean cma)
    {
        this.cma = cma;
        this.rank = rank;
        this.names = names;
        this.dir = dir;
        this.bootstrap = bootstrap;
        this.pairs = pairs;
        this.checksum = checksum;
    }

    /**
     * Runs the three rounds.
     *
     * @param connected     the peers this rank connected over shared memory.
     * @param regionBytes   each member's bytes as this rank's setting says; 0 when its arena is off.
     * @param deadlineNanos when to give up, as {@link System#nanoTime()}.
     * @return the arena, or null when there is none (no peers, turned off, views apart, no room).
     * @throws dev.hccl.api.HcclException when a member does not answer by the deadline.
     */
    ShmArena run(final Set<Integer> connected, final int regionBytes, final long deadlineNanos)
    {
        if (connected.isEmpty())
        {
            return null;
        }
        final int[] members = connected.stream().mapToInt(Integer::intValue).toArray();
        final int[] view = Arrays.copyOf(members, members.length + 1);
        view[members.length] = rank;
        Arrays.sort(view);
        final String mine = regionBytes == 0 ? OFF : Arrays.toString(view);
        bootstrap.put("arena-view/" + rank, utf8(mine));
        boolean agreed = !OFF.equals(mine);
        for (final int peer : members)
        {
            final String theirs = pairs.await("arena-view/" + peer, peer, deadlineNanos);
            if (!mine.equals(theirs))
            {
                LOG.debug("rank {}: no node arena: rank {} sees {} where this rank sees {}", rank, peer, theirs, mine);
                agreed = false;
            }
        }
        if (!agreed)
        {
            return null;
        }
        final ShmArena arena = view[0] == rank ? create(view, regionBytes, deadlineNanos) : map(view, deadlineNanos);
        if (null != arena)
        {
            try
            {
                arena.offer(new CmaHandshake(rank, view, bootstrap, pairs).run(
                    !cma ? ShmTransportProvider.CMA.variable() + "=0" :
                    checksum ? CommConfig.CHECKSUM.variable() + "=1 covers what is read in the arena only" : null,
                    deadlineNanos));
            }
            catch (final RuntimeException ex)
            {
                arena.close(0);
                throw ex;
            }
        }
        return arena;
    }

    private ShmArena create(final int[] view, final int regionBytes, final long deadlineNanos)
    {
        final Path path = dir.resolve(names.arenaFileName(rank));
        final long bytes = ShmArena.fileBytes(view.length, regionBytes);
        ShmFile file = null;
        try
        {
            file = ShmFile.create(path, bytes);
        }
        catch (final IOException | RuntimeException ex)
        {
            LOG.warn("rank {}: no node arena for ranks {}: cannot create {} ({} bytes needed, {} free in {}): {}; " +
                "collectives within the node pass messages instead. Lower {}, point {} to a tmpfs with more room, " +
                "or give the container more shared memory (Docker's --shm-size, {} by default)",
                rank, Arrays.toString(view), path, bytes, pairs.freeBytes(), dir, ex.toString(),
                ShmTransportProvider.ARENA_SIZE.variable(), ShmTransportProvider.DIR.variable(),
                ShmHandshake.DOCKER_SHM_DEFAULT);
        }
        bootstrap.put(key("created"), utf8(null == file ? FAIL : OK + " " + regionBytes));
        if (null == file)
        {
            return null;
        }
        try
        {
            boolean all = true;
            for (int i = 1; i < view.length; i++)
            {
                all &= OK.equals(pairs.await(key("mapped-" + view[i]), view[i], deadlineNanos));
            }
            if (!all)
            {
                file.unmap();
                return null;
            }
            return new ShmArena(file, view, 0, regionBytes, new ShmRegistrations(view, 0, names, dir), checksum);
        }
        catch (final RuntimeException ex)
        {
            file.unmap();
            throw ex;
        }
        finally
        {
            pairs.delete(path);
        }
    }

    private ShmArena map(final int[] view, final long deadlineNanos)
    {
        final int lowest = view[0];
        final String created = pairs.await(key(lowest, "created"), lowest, deadlineNanos);
        final int regionBytes = parseCreated(created);
        if (regionBytes <= 0)
        {
            LOG.debug("rank {}: no node arena: rank {} could not create it", rank, lowest);
            return null;
        }
        final Path path = dir.resolve(names.arenaFileName(lowest));
        ShmFile file = null;
        try
        {
            file = ShmFile.open(path, ShmArena.fileBytes(view.length, regionBytes));
        }
        catch (final IOException | RuntimeException ex)
        {
            LOG.warn("rank {}: no node arena for ranks {}: cannot map {}: {} (do all ranks see the same {}?)",
                rank, Arrays.toString(view), path, ex.toString(), ShmTransportProvider.DIR.variable());
        }
        bootstrap.put(key(lowest, "mapped-" + rank), utf8(null == file ? FAIL : OK));
        try
        {
            boolean all = null != file;
            for (int i = 1; i < view.length; i++)
            {
                if (view[i] != rank)
                {
                    all &= OK.equals(pairs.await(key(lowest, "mapped-" + view[i]), view[i], deadlineNanos));
                }
            }
            if (!all)
            {
                if (null != file)
                {
                    file.unmap();
                }
                return null;
            }
            final int member = Arrays.binarySearch(view, rank);
            return new ShmArena(file, view, member, regionBytes, new ShmRegistrations(view, member, names, dir),
                checksum);
        }
        catch (final RuntimeException ex)
        {
            if (null != file)
            {
                file.unmap();
            }
            throw ex;
        }
    }

    private static int parseCreated(final String value)
    {
        if (!value.startsWith(OK + " "))
        {
            return -1;
        }
        try
        {
            return ShmTransportProvider.checkArenaSize(Integer.parseInt(value.substring(OK.length() + 1)));
        }
        catch (final IllegalArgumentException ex)
        {
            return -1;
        }
    }

    private String key(final String what)
    {
        return key(rank, what);
    }

    private static String key(final int lowest, final String what)
    {
        return "arena-" + lowest + "/" + what;
    }

    private static byte[] utf8(final String text)
    {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
