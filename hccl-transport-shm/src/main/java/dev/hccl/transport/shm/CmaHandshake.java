package dev.hccl.transport.shm;

import dev.hccl.api.spi.Bootstrap;
import org.agrona.BufferUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Agrees among a node arena's members whether each may read the others' ordinary memory with
 * {@code process_vm_readv} ({@link ShmPeerMemory}), through the bootstrap store once the arena is mapped. All or
 * none: a member posts in its own memory only when every other can read it, so every member must read every other.
 * <ol>
 *     <li><b>Offer.</b> Each member publishes {@code arena-<lowest>/cma-<rank>}: {@code off} and why (the setting,
 *     {@code HCCL_CHECKSUM}, a JDK or kernel that cannot), or its process id, the address of a word of its memory and
 *     the random value the word holds. One {@code off} turns it off on every member alike.</li>
 *     <li><b>Ready.</b> Where Yama's {@code ptrace_scope} is 1, a process may read only its descendants' memory
 *     unless it is named: each member names the members' nearest common ancestor (the launcher, say) with
 *     {@code PR_SET_PTRACER}, which lets the job's own processes read it and no others, never any process. Then
 *     every member publishes {@code cma-ready-<rank>} and waits for the others' before it reads.</li>
 *     <li><b>Read.</b> Each member reads every other's word and publishes {@code cma-read-<rank>}: {@code ok} when it
 *     read the value published, else why not. A member in another PID namespace (another container) names a process
 *     id that means another process here, or none: the value tells. On when every member says {@code ok}.</li>
 * </ol>
 * The word stays reachable until every member has published its reading. Every member decides from the same keys.
 * When it is off, one DEBUG line says why; ordinary buffers are then copied into the arena as before.
 */
final class CmaHandshake
{
    private static final Logger LOG = LoggerFactory.getLogger(CmaHandshake.class);
    private static final String OFF = "off";
    private static final String OK = "ok";
    private static final Path PTRACE_SCOPE = Path.of("/proc/sys/kernel/yama/ptrace_scope");

    private final int rank;
    private final int lowest;
    private final int[] view;
    private final Bootstrap bootstrap;
    private final ShmHandshake pairs;

    /**
     * @param rank      this rank.
     * @param view      the arena's members' ranks, ascending.
     * @param bootstrap the rendezvous store.
     * @param pairs     the pairs' handshake, whose waits this one shares.
     */
    CmaHandshake(final int rank, final int[] view, final Bootstrap bootstrap, final ShmHandshake pairs)
    {
        this.rank = rank;
        this.lowest = view[0];
        this.view = view.clone();
        this.bootstrap = bootstrap;
        this.pairs = pairs;
    }

    /**
     * Runs the rounds.
     *
     * @param offOnlyBecause why this member cannot take part, or null when it can try.
     * @param deadlineNanos  when to give up, as {@link System#nanoTime()}.
     * @return the memory, or null when some member cannot read another's.
     * @throws dev.hccl.api.HcclException when a member does not answer by the deadline.
     */
    ShmPeerMemory run(final String offOnlyBecause, final long deadlineNanos)
    {
        String why = offOnlyBecause;
        CmaCalls.Reader calls = null;
        if (null == why)
        {
            try
            {
                calls = CmaCalls.bind().reader();
            }
            catch (final UnsupportedOperationException | IllegalStateException ex)
            {
                why = ex.getMessage();
            }
        }
        final long pid = ProcessHandle.current().pid();
        // The word the others read, only when this member offers to be read.
        final ByteBuffer word = null == why ? ByteBuffer.allocateDirect(Long.BYTES).order(ByteOrder.nativeOrder()) :
            null;
        if (null == word)
        {
            publish("cma-" + rank, OFF + " " + why);
        }
        else
        {
            final long value = new SecureRandom().nextLong() | 1;
            word.putLong(0, value);
            publish("cma-" + rank, pid + " " + BufferUtil.address(word) + " " + value);
        }

        final String[] offers = new String[view.length];
        for (int m = 0; m < view.length; m++)
        {
            offers[m] = view[m] == rank ? null : pairs.await(key("cma-" + view[m]), view[m], deadlineNanos);
            if (null == why && null != offers[m] && offers[m].startsWith(OFF))
            {
                why = "rank " + view[m] + " cannot: " + offers[m].substring(OFF.length()).trim();
            }
        }
        if (null != why)
        {
            if (null != word)
            {
                BufferUtil.free(word);
            }
            LOG.debug("rank {}: ordinary buffers are copied into the node arena, not read across processes: {}",
                rank, why);
            return null;
        }
        final int[] pids = new int[view.length];
        final long[] addresses = new long[view.length];
        final long[] values = new long[view.length];
        for (int m = 0; m < view.length; m++)
        {
            final String[] parts = null == offers[m] ? new String[] {Long.toString(pid), "0", "0"} :
                offers[m].split(" ");
            pids[m] = Integer.parseInt(parts[0]);
            addresses[m] = Long.parseLong(parts[1]);
            values[m] = Long.parseLong(parts[2]);
        }
        if (yamaRestricted())
        {
            final long ancestor = commonAncestor(pids);
            final int set = ancestor > 1 ? calls.setPtracer(ancestor) : -1;
            LOG.debug("rank {}: Yama's ptrace_scope is 1: named process {} the ptracer: {}", rank, ancestor,
                0 == set ? "done" : "not done (errno " + calls.errno() + ")");
        }
        // Every member waits, whatever its view of Yama: none reads before every other has named its ptracer.
        publish("cma-ready-" + rank, OK);
        for (final int peer : view)
        {
            if (peer != rank)
            {
                pairs.await(key("cma-ready-" + peer), peer, deadlineNanos);
            }
        }
        final ShmPeerMemory memory = new ShmPeerMemory(rank, view, pids, calls);
        final ByteBuffer probe = ByteBuffer.allocateDirect(Long.BYTES).order(ByteOrder.nativeOrder());
        String mine = OK;
        for (int m = 0; m < view.length && OK.equals(mine); m++)
        {
            if (view[m] != rank)
            {
                mine = probe(memory, m, addresses[m], values[m], probe);
            }
        }
        publish("cma-read-" + rank, mine);
        String verdict = OK.equals(mine) ? null : "this rank " + mine;
        for (final int peer : view)
        {
            if (peer != rank)
            {
                final String theirs = pairs.await(key("cma-read-" + peer), peer, deadlineNanos);
                if (null == verdict && !OK.equals(theirs))
                {
                    verdict = "rank " + peer + " " + theirs;
                }
            }
        }
        // The others have read the word: it may go.
        BufferUtil.free(word);
        if (null != verdict)
        {
            LOG.debug("rank {}: ordinary buffers are copied into the node arena, not read across processes: {}",
                rank, verdict);
            return null;
        }
        return memory;
    }

    private String probe(final ShmPeerMemory memory, final int member, final long address, final long value,
        final ByteBuffer probe)
    {
        probe.putLong(0, 0);
        final int errno = memory.probe(member, address, probe);
        if (0 != errno)
        {
            return "cannot read rank " + view[member] + "'s memory (process " + memory.pid(member) + "): " +
                (errno == CmaCalls.EPERM ? "EPERM: the kernel does not let it (Yama's ptrace_scope above 1, a " +
                "container without CAP_SYS_PTRACE, or a process id of another PID namespace)" :
                errno == CmaCalls.ESRCH ? "ESRCH: no such process here (another PID namespace?)" :
                errno == CmaCalls.ENOSYS ? "ENOSYS: the kernel or a seccomp filter does not offer process_vm_readv" :
                "errno " + errno);
        }
        return probe.getLong(0) == value ? OK : "read another process than rank " + view[member] + "'s (another " +
            "PID namespace, as in another container?)";
    }

    /** Whether Yama lets a process read only its descendants unless named ({@code ptrace_scope} 1). */
    private static boolean yamaRestricted()
    {
        try
        {
            return "1".equals(Files.readString(PTRACE_SCOPE).trim());
        }
        catch (final IOException | RuntimeException ex)
        {
            return false;
        }
    }

    /**
     * The nearest process that every member descends from, from {@code /proc}; 0 when there is none to be seen
     * (another PID namespace).
     */
    static long commonAncestor(final int[] pids)
    {
        List<Long> common = null;
        for (final int pid : pids)
        {
            final List<Long> line = ancestors(pid);
            if (null == common)
            {
                common = line;
            }
            else
            {
                common.retainAll(line);
            }
        }
        return null == common || common.isEmpty() ? 0 : common.get(0);
    }

    /** A process's parent, its parent's, and so on to 1: nearest first. */
    private static List<Long> ancestors(final long pid)
    {
        final List<Long> line = new ArrayList<>();
        long at = pid;
        while (at > 1 && line.size() < 4096)
        {
            try
            {
                final String stat = Files.readString(Path.of("/proc", Long.toString(at), "stat"));
                // pid (comm) state ppid ...: the command may hold spaces and parentheses, so read after the last ')'.
                final String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                at = Long.parseLong(fields[1]);
            }
            catch (final IOException | RuntimeException ex)
            {
                return new ArrayList<>();
            }
            line.add(at);
        }
        return line;
    }

    private void publish(final String what, final String value)
    {
        bootstrap.put(key(what), value.getBytes(StandardCharsets.UTF_8));
    }

    private String key(final String what)
    {
        return "arena-" + lowest + "/" + what;
    }

    @Override
    public String toString()
    {
        return "CmaHandshake" + Arrays.toString(view);
    }
}
