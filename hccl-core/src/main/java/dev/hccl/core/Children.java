package dev.hccl.core;

import dev.hccl.algorithms.RingAlgorithm;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.core.mailbox.Dispatcher;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The communicators made from one: {@code split} (NCCL's {@code ncclCommSplit}: an all-gather of every rank's color
 * and key, then {@link SplitPlan}) and {@code shrink} ({@link ShrinkPlan}, without a message). Each child's id is
 * derived alike on every member from the parent's id and the split's or shrink's index, and the child runs over the
 * parent's links.
 */
final class Children
{
    private final CommunicatorImpl parent;
    private final OpIssuer issuer;
    private final Dispatcher dispatcher;
    private final RingAlgorithm exchange = new RingAlgorithm();
    private final AtomicInteger shrinks = new AtomicInteger();
    /** Guarded by the collective lane, which a split holds. */
    private int splits;

    Children(final CommunicatorImpl parent, final OpIssuer issuer, final Dispatcher dispatcher)
    {
        this.parent = parent;
        this.issuer = issuer;
        this.dispatcher = dispatcher;
    }

    /**
     * The communicator of the surviving ranks, numbered in order.
     *
     * @param excludedRanks the ranks to leave out, as ranks of the parent.
     * @return the new communicator.
     */
    Communicator shrink(final int... excludedRanks)
    {
        final ShrinkPlan plan = ShrinkPlan.of(parent.worldSize(), parent.rank(), excludedRanks, parent.commId(),
            shrinks.getAndIncrement());
        return parent.child(plan.members(), plan.rank(), plan.commId());
    }

    /**
     * The communicator of the ranks that give the same color, numbered by key then parent rank; a collective of the
     * parent.
     *
     * @param color this rank's group; a negative one joins none.
     * @param key   this rank's order within the group.
     * @return the new communicator, or null for a negative color.
     */
    Communicator split(final int color, final int key)
    {
        dispatcher.splitBegins();
        try
        {
            return splitUnderWay(color, key);
        }
        finally
        {
            dispatcher.splitEnds();
        }
    }

    private Communicator splitUnderWay(final int color, final int key)
    {
        final int n = parent.worldSize();
        final ByteBuffer mine = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
        mine.putInt(0, color).putInt(4, key);
        final ByteBuffer all = ByteBuffer.allocateDirect(8 * n).order(ByteOrder.nativeOrder());
        final OpDescriptor desc = new OpDescriptor(Operation.SPLIT, DataType.INT32, null, OpDescriptor.NO_ROOT, 2);
        final int splitIndex;
        issuer.enter(IssueGuard.COLLECTIVES, desc); // the index and the sequence number pair up alike on every rank
        try
        {
            splitIndex = splits++;
            issuer.collective(true, desc, ctx -> exchange.allGather(ctx, mine, all, 2, DataType.INT32));
        }
        finally
        {
            issuer.exit(IssueGuard.COLLECTIVES);
        }
        final SplitPlan plan = SplitPlan.of(all, parent.rank(), parent.commId(), splitIndex);
        return plan == null ? null : parent.child(plan.members(), plan.rank(), plan.commId());
    }
}
