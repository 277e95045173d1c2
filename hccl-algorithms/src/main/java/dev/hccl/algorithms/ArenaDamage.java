package dev.hccl.algorithms;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.PeerGroup;

/**
 * The error of a node arena that holds what no member can have written: a CRC32C that does not match
 * ({@code HCCL_CHECKSUM}), or a control line no member writes so (a signal far ahead, a location of no buffer, codes
 * of no operation). Another process wrote into the shared memory; the operation fails rather than compute with it.
 */
final class ArenaDamage
{
    private ArenaDamage()
    {
    }

    /**
     * @param group     the ranks.
     * @param arena     the arena, whose words name its memory ({@link NodeArena#corrupted}).
     * @param operation the operation, or null.
     * @param member    the member whose line or data it is.
     * @param what      what is wrong, naming the member's rank.
     * @return {@link ErrorCode#E_SHM_SEGMENT}, its peer the member's rank.
     */
    static HcclException corrupted(
        final PeerGroup group, final NodeArena arena, final OpDescriptor operation, final int member, final String what)
    {
        return new HcclException(ErrorCode.E_SHM_SEGMENT, group.rank(), arena.rankOf(member),
            null == operation ? null : operation.operation(), HcclException.NO_SEQUENCE, arena.corrupted(what), null);
    }
}
