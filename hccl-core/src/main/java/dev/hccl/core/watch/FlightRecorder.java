package dev.hccl.core.watch;

import dev.hccl.api.CommConfig;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.core.mailbox.Position;
import dev.hccl.core.op.OpHistory;
import dev.hccl.core.op.OpListener;
import dev.hccl.core.op.OpRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A communicator's last operations, as PyTorch's flight recorder ({@code TORCH_NCCL_TRACE_BUFFER_SIZE}): each issued
 * collective, send and receive with its sequence number, what it moves, and when it was issued, started and ended,
 * kept in a ring of {@code HCCL_TRACE_BUFFER_SIZE} entries (a small object and a few clock reads an operation). On
 * failure, on demand ({@code Communicator.dumpTrace()}, or a file {@code hccl-dump-now} touched in the directory) every
 * rank writes them, with where it is, to {@code HCCL_DUMP_DIR} as JSON; {@code hccl-trace} reads all ranks' dumps and
 * says what went wrong.
 */
public final class FlightRecorder implements OpListener
{
    /**
     * The dump's format: 2 gives the failure as an object (message, code, peer, operation, seq, whether it was relayed
     * from a peer's own failure, and its causes), where 1 gave its message alone.
     */
    static final String FORMAT = "hccl-trace/2";
    /** The causes a dump lists at most, the failure's first. */
    static final int CAUSES_DUMPED = 16;
    /** The file whose modification asks every communicator of the process to dump. */
    static final String TRIGGER_FILE = "hccl-dump-now";
    /** The default directory's name, before the user's: {@code hccl-dumps-<user>} under the temporary directory. */
    static final String DEFAULT_DIR_PREFIX = "hccl-dumps";

    private static final Logger LOG = LoggerFactory.getLogger(FlightRecorder.class);
    private static final long BASE_NANOS = System.nanoTime();
    private static final long BASE_MICROS = System.currentTimeMillis() * 1000;
    /** Directories refused so far: each is warned about once per process, then only thrown. */
    private static final Set<Path> REFUSED_WARNED = ConcurrentHashMap.newKeySet();

    private final OpRecord[] ring;
    private final CommView comm;
    /** {@code HCCL_DUMP_DIR}, or null. */
    private final String dumpDir;
    private long recorded;
    /** Where the next entry goes in the ring. */
    private int next;
    private boolean dumpedOnFailure;

    /**
     * @param size    entries kept; 0 records nothing.
     * @param comm    what a dump says of the communicator.
     * @param dumpDir {@code HCCL_DUMP_DIR}: where dumps go, and whether the first failure writes one; null for this
     *                user's private directory under the temporary directory, and no dump on failure.
     */
    public FlightRecorder(final int size, final CommView comm, final String dumpDir)
    {
        this.ring = new OpRecord[size];
        this.comm = comm;
        this.dumpDir = dumpDir;
    }

    /** Microseconds since the epoch, from the monotonic clock: ordered within a process, comparable across hosts. */
    static long nowMicros()
    {
        return BASE_MICROS + (System.nanoTime() - BASE_NANOS) / 1000;
    }

    /** {@inheritDoc} Kept in the ring, which the operation path goes on writing to. */
    @Override
    public synchronized void issued(final OpRecord op)
    {
        if (ring.length > 0)
        {
            // A wrapping index, not the count modulo the size: a 64-bit division costs more than the rest of this.
            ring[next] = op;
            next = next + 1 == ring.length ? 0 : next + 1;
            recorded++;
        }
    }

    /**
     * {@inheritDoc} With {@code HCCL_DUMP_DIR} set, the first failure writes a dump; a dump that cannot be written is
     * logged, not thrown, as the failure goes on to its callers.
     */
    @Override
    public void failed(final HcclException failure, final boolean relayed)
    {
        if (dumpDir != null && firstFailure())
        {
            try
            {
                dump("failure: " + failure.getMessage());
            }
            catch (final RuntimeException ex)
            {
                LOG.warn("rank {}: could not write the flight recorder: {}", comm.rank(), ex.toString());
            }
        }
    }

    /**
     * Writes a dump to the dump directory ({@link #directory()}).
     *
     * @param reason why.
     * @return the file.
     */
    public Path dump(final String reason)
    {
        return dump(comm, directory(), reason);
    }

    /**
     * @return {@code HCCL_DUMP_DIR}, or this user's private directory under the temporary directory when unset.
     */
    public Path directory()
    {
        return directory(dumpDir, Path.of(System.getProperty("java.io.tmpdir")), who(comm));
    }

    /** The entries kept, oldest first. */
    synchronized List<OpRecord> entries()
    {
        final List<OpRecord> list = new ArrayList<>();
        // Once the ring has wrapped, the oldest entry is where the next goes.
        final int kept = (int)Math.min(recorded, ring.length);
        final int oldest = recorded > ring.length ? next : 0;
        for (int i = 0; i < kept; i++)
        {
            list.add(ring[(oldest + i) % ring.length]);
        }
        return list;
    }

    /**
     * The first failure asks for a dump, once.
     *
     * @return true the first time.
     */
    synchronized boolean firstFailure()
    {
        final boolean first = !dumpedOnFailure;
        dumpedOnFailure = true;
        return first;
    }

    /**
     * Where the dumps go.
     *
     * @param configured {@code HCCL_DUMP_DIR}, or null.
     * @param tmp        the temporary directory.
     * @param who        the rank, for the message ({@link #who}).
     * @return {@code configured}, checked as {@link PrivateDirectory#openNamed} does; unset, this user's own
     *         {@code hccl-dumps-<user>} in {@code tmp} ({@link PrivateDirectory#open}). Either is made owner-only if
     *         need be.
     * @throws UncheckedIOException when the directory is not this user's (another user's link, another user's
     *                              directory, one writable by others; the default one may not be a link at all) or
     *                              cannot be made, naming it, its owner and the setting to set; the first refusal of
     *                              each directory in the process is logged at WARN too.
     */
    static Path directory(final String configured, final Path tmp, final String who)
    {
        final Path dir = configured != null ? Path.of(configured) : PrivateDirectory.perUser(tmp, DEFAULT_DIR_PREFIX);
        try
        {
            return configured != null ? PrivateDirectory.openNamed(dir) : PrivateDirectory.open(dir);
        }
        catch (final IOException ex)
        {
            final String message = who + ": the flight recorder is not written: " + ex.getMessage() +
                ". Remove it if it is not yours, or set " + CommConfig.DUMP_DIR.variable() +
                " to a directory of your own";
            if (REFUSED_WARNED.add(dir))
            {
                LOG.warn(message);
            }
            throw new UncheckedIOException(message, ex);
        }
    }

    /**
     * Writes the dump: {@code hccl-trace-<comm id>-r<rank>.json} in {@code dir}, replacing an older one whole. The file
     * is made owner-only under a fresh name and renamed over the old one: no link there or in its place is followed.
     *
     * @param comm   what the dump says of the communicator.
     * @param dir    the directory ({@link #directory}); made owner-only if need be.
     * @param reason why.
     * @return the file.
     */
    private Path dump(final CommView comm, final Path dir, final String reason)
    {
        Path tmp = null;
        try
        {
            if (dir.getFileSystem().supportedFileAttributeViews().contains("posix"))
            {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PrivateDirectory.OWNER_ONLY));
            }
            else
            {
                Files.createDirectories(dir);
            }
            final Path file = dir.resolve("hccl-trace-" + Long.toHexString(comm.commId()) + "-r" + comm.rank() +
                ".json");
            // A new name, owner-only (rw-------) where the file system has modes.
            tmp = Files.createTempFile(dir, ".hccl-trace-", ".tmp");
            try (Writer out = new OutputStreamWriter(Files.newOutputStream(tmp, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING, LinkOption.NOFOLLOW_LINKS), StandardCharsets.UTF_8))
            {
                out.write(json(comm, reason));
            }
            // A rename replaces the entry, link or not, and never writes through it.
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            tmp = null;
            LOG.info("{}: flight recorder written to {} ({})", who(comm), file, reason);
            return file;
        }
        catch (final IOException ex)
        {
            final UncheckedIOException failure =
                new UncheckedIOException("cannot write the flight recorder to " + dir, ex);
            if (tmp != null)
            {
                try
                {
                    Files.deleteIfExists(tmp);
                }
                catch (final IOException again)
                {
                    failure.addSuppressed(again);
                }
            }
            throw failure;
        }
    }

    /** {@code rank 1}, or {@code rank 1 (job rank 3)} in a communicator split or shrunk from the job's. */
    static String who(final CommView comm)
    {
        final int job = comm.jobRanks()[comm.rank()];
        return "rank " + comm.rank() + (job == comm.rank() ? "" : " (job rank " + job + ")");
    }

    private String json(final CommView comm, final String reason)
    {
        final Json j = new Json();
        j.open().field("format", FORMAT).field("commId", Long.toHexString(comm.commId()))
            .field("rank", comm.rank()).field("worldSize", comm.worldSize())
            .field("host", comm.hostName())
            .field("pid", ProcessHandle.current().pid())
            .field("jvm", ManagementFactory.getRuntimeMXBean().getName())
            .field("reason", reason).field("dumpedAtMicros", nowMicros());
        final HcclException failure = comm.scope().failures().get();
        if (failure == null)
        {
            j.field("failure", null);
        }
        else
        {
            // As values, so that hccl-trace tells the root cause from failures passed on without reading the text.
            j.key("failure").open().field("message", failure.getMessage()).field("code", failure.errorCode().name())
                .field("peer", failure.peer()).field("operation", failure.operation() == null ? null :
                    failure.operation().displayName()).field("seq", failure.sequence())
                .field("relayed", comm.scope().failures().relayed());
            j.key("causes").array();
            // At most CAUSES_DUMPED: a chain may loop (initCause allows A -> B -> A).
            int listed = 0;
            for (Throwable t = failure.getCause(); t != null && listed < CAUSES_DUMPED; t = t.getCause(), listed++)
            {
                j.value(t.toString());
            }
            j.end().close();
        }
        final Position p = comm.scope().whereabouts().now();
        j.key("position").open().field("idle", p.idle()).field("seq", p.seq())
            .field("operation", p.desc() == null ? null : p.desc().toString()).field("waitingFor", p.waitingFor())
            .field("waitedMillis", p.waitedMillis()).close();
        j.key("jobRanks").array();
        for (final int r : comm.jobRanks())
        {
            j.value(r);
        }
        j.end();
        j.key("lostRanks").array();
        for (final int r : comm.lostRanks())
        {
            j.value(r);
        }
        j.end();
        j.key("entries").array();
        for (final OpRecord e : entries())
        {
            final OpDescriptor d = e.desc();
            final long bytes = d.dataType() == null ? 0 : d.count() * d.dataType().size();
            final String algorithm = e.algorithm();
            final HcclException error = e.failure();
            j.open().field("lane", e.lane().name().toLowerCase()).field("peer", e.peer()).field("seq", e.seq())
                .field("operation", d.operation().displayName()).field("dataType", d.dataType() == null ? null :
                    d.dataType().name()).field("reduceOp", d.reduceOp() == null ? null : d.reduceOp().name())
                .field("root", d.root()).field("count", d.count())
                .field("algorithm", e.lane() != OpRecord.Lane.COLLECTIVE ? null : algorithm != null ? algorithm :
                    comm.algorithmName(d))
                .field("fingerprint", Long.toHexString(OpHistory.fingerprint(d)))
                .field("state", state(e)).field("issuedMicros", micros(e.issuedNanos()))
                .field("startedMicros", micros(e.startedNanos())).field("endedMicros", micros(e.endedNanos()))
                .field("bytes", bytes).field("error", error == null ? null : error.getMessage()).close();
        }
        j.end();
        return j.close().toString();
    }

    /** What became of an operation: failed, completed, started or issued. */
    private static String state(final OpRecord e)
    {
        if (e.failure() != null)
        {
            return "failed";
        }
        if (e.isDone())
        {
            return "completed";
        }
        return e.startedNanos() != OpRecord.NOT_YET ? "started" : "issued";
    }

    /** A time of {@link System#nanoTime()} in {@link #nowMicros()}'s terms; -1 for {@link OpRecord#NOT_YET}. */
    private static long micros(final long nanos)
    {
        return nanos == OpRecord.NOT_YET ? -1 : BASE_MICROS + (nanos - BASE_NANOS) / 1000;
    }

    /** A small JSON writer: the library takes no JSON dependency for one file. */
    private static final class Json
    {
        private final StringBuilder out = new StringBuilder();
        private boolean first = true;

        Json open()
        {
            comma();
            out.append('{');
            first = true;
            return this;
        }

        Json close()
        {
            out.append('}');
            first = false;
            return this;
        }

        Json array()
        {
            out.append('[');
            first = true;
            return this;
        }

        Json end()
        {
            out.append(']');
            first = false;
            return this;
        }

        Json key(final String name)
        {
            comma();
            string(name);
            out.append(':');
            first = true; // the value follows without a comma
            return this;
        }

        Json field(final String name, final Object value)
        {
            key(name);
            return value(value);
        }

        Json value(final Object value)
        {
            comma();
            if (value == null)
            {
                out.append("null");
            }
            else if (value instanceof Number || value instanceof Boolean)
            {
                out.append(value);
            }
            else
            {
                string(value.toString());
            }
            first = false;
            return this;
        }

        private void comma()
        {
            if (!first)
            {
                out.append(',');
            }
            first = false;
        }

        private void string(final String s)
        {
            out.append('"');
            for (int i = 0; i < s.length(); i++)
            {
                final char c = s.charAt(i);
                if (c == '"' || c == '\\')
                {
                    out.append('\\').append(c);
                }
                else if (c < 0x20)
                {
                    out.append(String.format("\\u%04x", (int)c));
                }
                else
                {
                    out.append(c);
                }
            }
            out.append('"');
        }

        @Override
        public String toString()
        {
            return out.toString();
        }
    }
}
