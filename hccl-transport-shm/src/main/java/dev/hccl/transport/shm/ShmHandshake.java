package dev.hccl.transport.shm;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.Bootstrap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Sets up the segments of one rank's pairs through the bootstrap store, in three phases that cannot deadlock, since
 * each waits only for phases of the others that wait for nothing earlier:
 * <ol>
 *     <li>for every pair where this rank is the lower: create the file, fill it, map it and publish
 *     {@code <lo>-<hi>/created} ({@code ok <ringBytes>} or {@code fail});</li>
 *     <li>for every pair where this rank is the higher: wait for {@code created}; when ok, map the file, unlink it
 *     and publish {@code <lo>-<hi>/mapped} ({@code ok} or {@code fail});</li>
 *     <li>for every pair where this rank is the lower: wait for {@code mapped}, delete the file (it is usually gone
 *     already) and keep the pair when ok.</li>
 * </ol>
 * A pair that fails (no room, a file that cannot be mapped) is left out on both of its ranks, which read the same
 * answers. A peer that does not answer by the deadline fails the rank: this rank's files are deleted and its
 * mappings released before the exception. When {@link #run} returns, no file of this rank is left in the directory.
 */
final class ShmHandshake
{
    /** How long one bootstrap wait lasts before this rank beats and looks whether it is closing. */
    static final long WAIT_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** Docker's default size of /dev/shm, named in the warning about room. */
    static final String DOCKER_SHM_DEFAULT = "64 MiB";

    private static final Logger LOG = LoggerFactory.getLogger(ShmHandshake.class);
    private static final String OK = "ok";
    private static final String FAIL = "fail";
    /** The store's counter of ranks that met a name taken: the first of the job warns. */
    private static final String NAME_TAKEN = "name-taken";

    private final int rank;
    private final ShmNames names;
    private final Path dir;
    private final int ringBytes;
    private final Bootstrap bootstrap;
    private final BooleanSupplier closing;
    /** Every segment mapped so far, by peer. */
    private final Map<Integer, ShmSegment> mapped = new TreeMap<>();
    /** The files this rank created and has not deleted yet. */
    private final Set<Path> ownFiles = new LinkedHashSet<>();
    /** Whether this rank met a name taken already (and counted it in {@link #NAME_TAKEN}). */
    private boolean metNameTaken;

    /**
     * A handshake.
     *
     * @param rank      this rank.
     * @param names     the names of the pairs' files.
     * @param dir       the directory.
     * @param ringBytes the capacity of each ring this rank creates.
     * @param bootstrap the rendezvous store.
     * @param closing   whether the transport is closing: the handshake then stops.
     */
    ShmHandshake(
        final int rank,
        final ShmNames names,
        final Path dir,
        final int ringBytes,
        final Bootstrap bootstrap,
        final BooleanSupplier closing)
    {
        this.rank = rank;
        this.names = names;
        this.dir = dir;
        this.ringBytes = ringBytes;
        this.bootstrap = bootstrap;
        this.closing = closing;
    }

    /**
     * Connects the pairs with the given peers.
     *
     * @param peers         the peers' ranks.
     * @param deadlineNanos when to give up, as {@link System#nanoTime()}.
     * @return the segments of the pairs connected, by peer.
     * @throws HcclException {@link ErrorCode#E_TIMEOUT} when a peer does not answer in time;
     *                       {@link ErrorCode#E_UNAVAIL} when the transport closes meanwhile.
     */
    Map<Integer, ShmSegment> run(final Collection<Integer> peers, final long deadlineNanos)
    {
        try
        {
            for (final int peer : peers)
            {
                if (peer > rank)
                {
                    create(peer);
                }
            }
            for (final int peer : peers)
            {
                if (peer < rank)
                {
                    answer(peer, deadlineNanos);
                }
            }
            for (final int peer : peers)
            {
                if (peer > rank && mapped.containsKey(peer))
                {
                    conclude(peer, deadlineNanos);
                }
            }
            deleteOwnFiles();
            return new TreeMap<>(mapped);
        }
        catch (final RuntimeException | Error ex)
        {
            abandon();
            throw ex;
        }
    }

    /** Phase 1, this rank the lower: create, fill and map the pair's file, and say whether it worked. */
    private void create(final int peer)
    {
        final Path file = dir.resolve(names.fileName(rank, peer));
        String answer = FAIL;
        try
        {
            final ShmSegment segment = ShmSegment.create(file, ringBytes);
            ownFiles.add(file);
            segment.inbound(true).consumerHeartbeatTime(System.currentTimeMillis());
            mapped.put(peer, segment);
            answer = OK + " " + ringBytes;
        }
        catch (final FileAlreadyExistsException ex)
        {
            nameTaken(peer, file);
        }
        catch (final IOException | RuntimeException ex)
        {
            LOG.warn("rank {}: shared memory with rank {} falls back to TCP: cannot create {} ({} bytes needed, {} " +
                "free in {}): {}. Point {} to a directory on a tmpfs with more room, or give the container more " +
                "shared memory (Docker's --shm-size, {} by default)",
                rank, peer, file, ShmSegment.fileBytes(ringBytes), freeBytes(), dir, ex.toString(),
                ShmTransportProvider.DIR.variable(), DOCKER_SHM_DEFAULT);
        }
        bootstrap.put(key(rank, peer, "created"), answer.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Someone else holds a pair's name. The names are secret to the job, so the file was planted (or is left from a
     * process that knew the token): never adopted, and loud once per job (the first rank of the job to meet one, by a
     * counter in the store), since whoever took one name usually took them all.
     */
    private void nameTaken(final int peer, final Path file)
    {
        final boolean firstOfJob = !metNameTaken && bootstrap.add(NAME_TAKEN, 1) == 1;
        metNameTaken = true;
        if (!firstOfJob)
        {
            LOG.debug("rank {}: shared memory with rank {} falls back to TCP: {} exists already, owned by {}",
                rank, peer, file, ownerOf(file));
            return;
        }
        LOG.warn("rank {}: shared memory with rank {} falls back to TCP: {} exists already, owned by {}, though this " +
            "job's segment names are secret: another process created it first. Remove it, or point {} to a " +
            "directory only this user can write; other pairs of the job that meet the same fall back too (logged " +
            "at DEBUG)", rank, peer, file, ownerOf(file), ShmTransportProvider.DIR.variable());
    }

    private static String ownerOf(final Path file)
    {
        try
        {
            return Files.getOwner(file, LinkOption.NOFOLLOW_LINKS).getName();
        }
        catch (final IOException | RuntimeException ex)
        {
            return "an unknown user (" + ex + ")";
        }
    }

    /** Phase 2, this rank the higher: map the file the lower rank created, unlink it, and say whether it worked. */
    private void answer(final int peer, final long deadlineNanos)
    {
        final Path file = dir.resolve(names.fileName(peer, rank));
        final String created;
        try
        {
            created = await(key(peer, rank, "created"), peer, deadlineNanos);
        }
        catch (final RuntimeException ex)
        {
            // The lower rank may have died between creating the file and saying so: nobody else will remove it.
            delete(file);
            throw ex;
        }
        final int peerRingBytes = parseCreated(created);
        if (peerRingBytes < 0)
        {
            LOG.debug("rank {}: rank {} could not create our segment ({}); the pair falls back", rank, peer, created);
            return;
        }
        String answer = FAIL;
        try
        {
            final ShmSegment segment = ShmSegment.open(file, peerRingBytes);
            segment.inbound(false).consumerHeartbeatTime(System.currentTimeMillis());
            mapped.put(peer, segment);
            answer = OK;
        }
        catch (final IOException | RuntimeException ex)
        {
            LOG.warn("rank {}: shared memory with rank {} falls back to TCP: cannot map {}: {} (do both ranks see " +
                "the same {}?)", rank, peer, file, ex.toString(), ShmTransportProvider.DIR.variable());
        }
        if (OK.equals(answer))
        {
            // Both ends have it mapped: the name is needed no more, and nothing is left behind however we end.
            delete(file);
        }
        bootstrap.put(key(peer, rank, "mapped"), answer.getBytes(StandardCharsets.UTF_8));
    }

    /** Phase 3, this rank the lower: learn whether the higher rank mapped the file; the file goes either way. */
    private void conclude(final int peer, final long deadlineNanos)
    {
        final String answer = await(key(rank, peer, "mapped"), peer, deadlineNanos);
        final Path file = dir.resolve(names.fileName(rank, peer));
        if (delete(file))
        {
            ownFiles.remove(file);
        }
        if (!OK.equals(answer))
        {
            LOG.debug("rank {}: rank {} could not map our segment; the pair falls back", rank, peer);
            mapped.remove(peer).unmap();
        }
    }

    String await(final String key, final int peer, final long deadlineNanos)
    {
        while (true)
        {
            if (closing.getAsBoolean())
            {
                throw new HcclException(
                    ErrorCode.E_UNAVAIL, rank, HcclException.UNKNOWN_RANK, Operation.INIT, HcclException.NO_SEQUENCE,
                    "the shared-memory transport was closed while connecting", null);
            }
            final long now = System.nanoTime();
            if (now - deadlineNanos >= 0)
            {
                throw new HcclException(
                    ErrorCode.E_TIMEOUT, rank, peer, Operation.INIT, HcclException.NO_SEQUENCE,
                    "rank " + peer + " did not answer the shared-memory handshake in time (waiting for '" + key +
                    "'): it may have died, hung, or not have reached its connect", null);
            }
            final long sliceEnd = now + WAIT_SLICE_NANOS;
            final byte[] value = bootstrap.get(key, deadlineNanos - sliceEnd < 0 ? deadlineNanos : sliceEnd);
            if (null != value)
            {
                return new String(value, StandardCharsets.UTF_8);
            }
            // A peer that connects already may watch our heartbeat.
            beat();
        }
    }

    private void beat()
    {
        final long now = System.currentTimeMillis();
        for (final Map.Entry<Integer, ShmSegment> e : mapped.entrySet())
        {
            e.getValue().inbound(rank < e.getKey()).consumerHeartbeatTime(now);
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
            final int bytes = Integer.parseInt(value.substring(OK.length() + 1));
            ShmSegment.checkRingBytes(bytes);
            return bytes;
        }
        catch (final IllegalArgumentException ex)
        {
            return -1;
        }
    }

    private static String key(final int lo, final int hi, final String what)
    {
        return lo + "-" + hi + "/" + what;
    }

    String freeBytes()
    {
        return ShmFile.usableBytes(dir);
    }

    boolean delete(final Path file)
    {
        try
        {
            Files.deleteIfExists(file);
            return true;
        }
        catch (final IOException ex)
        {
            LOG.warn("rank {}: cannot delete {}: {}", rank, file, ex.toString());
            return false;
        }
    }

    /**
     * Deletes the files this rank created and still holds (none, unless a deletion failed before).
     */
    void deleteOwnFiles()
    {
        ownFiles.removeIf(this::delete);
    }

    /** On failure: releases every mapping and deletes every file of this rank. */
    private void abandon()
    {
        for (final ShmSegment segment : mapped.values())
        {
            segment.unmap();
        }
        mapped.clear();
        deleteOwnFiles();
    }
}
