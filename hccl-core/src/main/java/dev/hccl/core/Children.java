package dev.hccl.core;

import dev.hccl.api.Communicator;
import dev.hccl.core.mailbox.Dispatcher;
import dev.hccl.core.op.Operations;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The communicators made from one: {@code split} (NCCL's {@code ncclCommSplit}: an all-gather of every rank's color
 * and key, then {@link SplitPlan}) and {@code shrink} ({@link ShrinkPlan}, without a message). Each child's id is
 * derived alike on every member from the parent's id and the split's or shrink's index, and the child runs over the
 * parent's links.
 */
final class Children
{
    /** Makes a child over the parent's links. */
    @FunctionalInterface
    interface Factory
    {
        /**
         * @param members its ranks, as ranks of the parent, in their new order.
         * @param newRank this rank's place among them.
         * @param newId   its id, derived alike on every member.
         * @return the new communicator.
         */
        Communicator child(int[] members, int newRank, long newId);
    }

    private final int rank;
    private final int worldSize;
    private final long commId;
    private final Operations ops;
    private final Dispatcher dispatcher;
    private final Factory factory;
    private final AtomicInteger shrinks = new AtomicInteger();

    /**
     * @param rank       this rank of the parent.
     * @param worldSize  the parent's ranks.
     * @param commId     the parent's id.
     * @param ops        the parent's operations, which run a split's exchange.
     * @param dispatcher the messages of every communicator over the links, which a split holds back meanwhile.
     * @param factory    makes a child.
     */
    Children(
        final int rank, final int worldSize, final long commId, final Operations ops, final Dispatcher dispatcher,
        final Factory factory)
    {
        this.rank = rank;
        this.worldSize = worldSize;
        this.commId = commId;
        this.ops = ops;
        this.dispatcher = dispatcher;
        this.factory = factory;
    }

    /**
     * The communicator of the surviving ranks, numbered in order.
     *
     * @param excludedRanks the ranks to leave out, as ranks of the parent.
     * @return the new communicator.
     */
    Communicator shrink(final int... excludedRanks)
    {
        final ShrinkPlan plan = ShrinkPlan.of(worldSize, rank, excludedRanks, commId, shrinks.getAndIncrement());
        return factory.child(plan.members(), plan.rank(), plan.commId());
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
        final Operations.SplitExchange exchanged = ops.splitExchange(color, key);
        final SplitPlan plan = SplitPlan.of(exchanged.colorsAndKeys(), rank, commId, exchanged.index());
        return plan == null ? null : factory.child(plan.members(), plan.rank(), plan.commId());
    }
}
