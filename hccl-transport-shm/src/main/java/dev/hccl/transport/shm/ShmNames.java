package dev.hccl.transport.shm;

import dev.hccl.api.spi.JobKey;

import java.nio.ByteBuffer;
import java.util.HexFormat;

/**
 * The names of the pairs' segment files in the shared-memory directory: {@code hccl-} and 32 hex digits, the first
 * {@value #NAME_BITS} bits of HMAC-SHA256 keyed with the job's key ({@link JobKey} of the job token) over the root
 * communicator's id and the pair's two ranks.
 * <p>
 * Why derived, not random: both ranks of a pair compute the name with no message between them, so the higher rank can
 * still remove the file of a lower rank that died after creating it. Why keyed: another user of the machine, who
 * lists the directory but does not know the token, learns neither the communicator id nor the name of any other pair
 * from one name, and so cannot create those names first to push the pairs onto TCP. In a job started without a token,
 * rank 0 hands a random one to every rank through the rendezvous store: the names are then as private as the store.
 * Thread-safe.
 */
final class ShmNames
{
    /** What every segment's name starts with, so that an administrator can tell whose files they are. */
    static final String PREFIX = "hccl-";
    /** Bits of the keyed hash kept in a name. */
    static final int NAME_BITS = 128;

    /** Keeps these hashes apart from any other proof made with the job's key. */
    private static final String ROLE = "shm-segment-name";
    /** The same, for node arenas. */
    private static final String ARENA_ROLE = "shm-arena-name";
    /** The same, for registered buffers. */
    private static final String REGISTERED_ROLE = "shm-registered-name";

    private final JobKey key;
    private final long commId;

    /**
     * The names of one job's root communicator.
     *
     * @param jobToken the job's shared secret, as the transport context gives it.
     * @param commId   the root communicator's id.
     */
    ShmNames(final String jobToken, final long commId)
    {
        this.key = JobKey.of(jobToken);
        this.commId = commId;
    }

    /**
     * The name of a pair's file.
     *
     * @param lo the lower rank.
     * @param hi the higher rank.
     * @return {@code hccl-} and {@value #NAME_BITS} bits in hex.
     */
    String fileName(final int lo, final int hi)
    {
        return name(ROLE, ByteBuffer.allocate(2 * Integer.BYTES).putInt(lo).putInt(hi).array());
    }

    /**
     * The name of a node arena's file.
     *
     * @param lowest the arena's lowest rank, which creates it.
     * @return {@code hccl-} and {@value #NAME_BITS} bits in hex, apart from every pair's.
     */
    String arenaFileName(final int lowest)
    {
        return name(ARENA_ROLE, ByteBuffer.allocate(Integer.BYTES).putInt(lowest).array());
    }

    /**
     * The name of a member's file of a registered buffer ({@link ShmRegistrations}).
     *
     * @param rank the member's rank, which creates it.
     * @param id   the registration, numbered alike on every member.
     * @return {@code hccl-} and {@value #NAME_BITS} bits in hex, apart from every pair's and arena's.
     */
    String registeredFileName(final int rank, final int id)
    {
        return name(REGISTERED_ROLE, ByteBuffer.allocate(2 * Integer.BYTES).putInt(rank).putInt(id).array());
    }

    private String name(final String role, final byte[] ranks)
    {
        final byte[] mac = key.prove(role, ByteBuffer.allocate(Long.BYTES).putLong(commId).array(), ranks);
        return PREFIX + HexFormat.of().formatHex(mac, 0, NAME_BITS / Byte.SIZE);
    }
}
