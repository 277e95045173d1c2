package dev.hccl.algorithms;

import dev.hccl.api.HcclException;
import dev.hccl.api.spi.DescriptorCodec;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.PeerGroup;

/**
 * An operation as a member's operation line in the node arena holds it ({@link ArenaSteps}): its codes and root in
 * one long, its count in the next; and what a line that differs from this rank's operation means: another operation,
 * which fails as a mismatch ({@link PeerGroup#mismatch}, as the mailbox's fingerprints do), or codes that no rank
 * writes, which fail as corruption ({@link ArenaDamage}).
 */
final class ArenaOperationLine
{
    private ArenaOperationLine()
    {
    }

    /**
     * @param desc an operation.
     * @return its codes and root, as its line's first long holds them.
     */
    static long codes(final OpDescriptor desc)
    {
        return (long)DescriptorCodec.code(desc.operation()) << 48 | (long)DescriptorCodec.code(desc.dataType()) << 40 |
            (long)DescriptorCodec.code(desc.reduceOp()) << 32 | (desc.root() & 0xFFFF_FFFFL);
    }

    /**
     * The failure of a member whose line holds another operation than this rank's.
     *
     * @param group     the ranks.
     * @param arena     the arena.
     * @param operation this rank's operation.
     * @param member    the member whose line was read.
     * @param step      the step it was read in.
     * @param codes     the line's codes and root.
     * @param count     the line's count.
     * @return the mismatch, or the corruption when no rank writes such a line.
     */
    static HcclException differs(final PeerGroup group, final NodeArena arena, final OpDescriptor operation,
        final int member, final long step, final long codes, final long count)
    {
        final int op = (int)(codes >>> 48) & 0xFF;
        final int type = (int)(codes >>> 40) & 0xFF;
        final int reduction = (int)(codes >>> 32) & 0xFF;
        final String bad = DescriptorCodec.describeBad(op, type, reduction);
        if (null != bad || count < 0 || codes >>> 56 != 0)
        {
            return ArenaDamage.corrupted(group, arena, operation, member, "rank " + arena.rankOf(member) + "'s " +
                "operation line of step " + step + " holds " + (null != bad ? bad : "codes " + Long.toHexString(codes) +
                " and count " + count) + ", which no rank writes");
        }
        return group.mismatch(member, new DescriptorCodec().decode(op, type, reduction, (int)codes, count));
    }
}
