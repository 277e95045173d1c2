package dev.hccl.transport.shm;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Setting;
import dev.hccl.api.spi.Transport;
import dev.hccl.api.spi.TransportContext;
import dev.hccl.api.spi.TransportKind;
import dev.hccl.api.spi.TransportProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.List;

/**
 * The shared-memory transport's plug-in, found with {@link java.util.ServiceLoader}: preferred to TCP between ranks
 * of one node.
 */
public final class ShmTransportProvider implements TransportProvider
{
    /** Above TCP's 100. */
    public static final int PREFERENCE = 200;
    /** What {@link #kind()} says. */
    private static final TransportKind KIND =
        TransportKind.sharedMemory(new TransportKind.LinkFigures(3e-6 / 2.5, 1 / 2.4e9 / 2.5));
    /**
     * The directory (a tmpfs) where two ranks of a node create the segment they share; each segment is removed from
     * it as soon as both ranks have mapped it.
     */
    public static final Setting<String> DIR = Setting.text("HCCL_SHM_DIR", "/dev/shm",
        "the directory (a tmpfs) where two ranks of a node create the segment they share");
    /** On: ranks of one node talk over TCP (NCCL's {@code NCCL_SHM_DISABLE}). */
    public static final Setting<Boolean> DISABLE = Setting.flag("HCCL_SHM_DISABLE",
        "ranks of one node talk over TCP, not shared memory");

    /**
     * Bytes of each rank's region in the node arena, the memory the ranks of a node share for their collectives
     * ({@link ShmArena}); 0 turns the arena off, and the collectives then pass messages over the pairs' rings.
     */
    public static final Setting<Integer> ARENA_SIZE = Setting.of("HCCL_SHM_ARENA_SIZE", 4 * 1024 * 1024,
        Setting::parseInteger, v -> v == 0 || validArenaSize(v), "0, or a multiple of 4096 in [64 KiB, 256 MiB]",
        "bytes of each rank's region in the node arena that collectives within a node share; 0 turns it off");

    /**
     * On: the members of a node arena read each other's ordinary direct buffers with one copy across processes
     * ({@code process_vm_readv}, JDK 22 on), as Open MPI's CMA does, where every member can. Off by default: where it
     * was measured (docs/PERFORMANCE.md, "Ordinary buffers read across processes") the kernel's copy was slower than
     * copying into the arena, so it is for machines where a measurement says otherwise.
     */
    public static final Setting<Boolean> CMA = Setting.flag("HCCL_CMA",
        "ranks of a node read each other's ordinary buffers across processes (process_vm_readv, JDK 22 on)");

    private static final int ARENA_SIZE_MIN = 64 * 1024;
    private static final int ARENA_SIZE_MAX = 256 * 1024 * 1024;
    private static final Logger LOG = LoggerFactory.getLogger(ShmTransportProvider.class);

    /**
     * For the {@link java.util.ServiceLoader}.
     */
    public ShmTransportProvider()
    {
    }

    /**
     * {@inheritDoc}
     *
     * @return {@code shm}.
     */
    @Override
    public String name()
    {
        return "shm";
    }

    /**
     * {@inheritDoc}
     *
     * @return {@value #PREFERENCE}.
     */
    @Override
    public int preference()
    {
        return PREFERENCE;
    }

    /**
     * Shared memory within a server: the 2-vCPU VM's 3 us per message and 2.4 GB/s per link ({@code
     * docs/PERFORMANCE.md}: a copy into the pair's ring and one out of it, no system call) made 2.5 times faster, the
     * speedup the cost model assumes of a server over that VM.
     *
     * @return shared memory with those figures.
     */
    @Override
    public TransportKind kind()
    {
        return KIND;
    }

    /**
     * {@inheritDoc}
     *
     * @return {@link #DIR}, {@link #DISABLE}, {@link #ARENA_SIZE} and {@link #CMA}.
     */
    @Override
    public List<Setting<?>> settings()
    {
        return List.of(DIR, DISABLE, ARENA_SIZE, CMA);
    }

    /**
     * {@inheritDoc}
     * <p>
     * Null when {@code HCCL_SHM_DISABLE} is set (logged at DEBUG) or when {@code HCCL_SHM_DIR} is not a writable
     * directory (logged at WARN): ranks of this node then talk over TCP.
     */
    @Override
    public Transport open(final TransportContext context)
    {
        final CommConfig config = context.config();
        if (config.get(DISABLE))
        {
            LOG.debug("rank {}: shared memory off ({}=1)", context.rank(), DISABLE.variable());
            return null;
        }
        final Path dir;
        try
        {
            final Path given = Path.of(config.get(DIR));
            if (!Files.isDirectory(given) || !Files.isWritable(given))
            {
                warnUnusable(context, config.get(DIR), "not a writable directory");
                return null;
            }
            // The real path: ranks that reach the directory through different links still agree on it.
            dir = given.toRealPath();
        }
        catch (final InvalidPathException | IOException ex)
        {
            warnUnusable(context, config.get(DIR), ex.toString());
            return null;
        }
        return new ShmTransport(context, dir);
    }

    private static boolean validArenaSize(final int bytes)
    {
        return bytes % 4096 == 0 && bytes >= ARENA_SIZE_MIN && bytes <= ARENA_SIZE_MAX;
    }

    /**
     * Checks an arena region's size, as a peer published it.
     *
     * @param bytes the size.
     * @return bytes.
     * @throws IllegalArgumentException unless {@link #ARENA_SIZE} would accept it, and not 0.
     */
    static int checkArenaSize(final int bytes)
    {
        if (!validArenaSize(bytes))
        {
            throw new IllegalArgumentException("arena region of " + bytes + " bytes");
        }
        return bytes;
    }

    private static void warnUnusable(final TransportContext context, final String dir, final String why)
    {
        LOG.warn("rank {}: shared memory off: {} ({}) is {}; ranks of this node talk over TCP",
            context.rank(), dir, DIR.variable(), why);
    }
}
