package dev.hccl.algorithms;

import dev.hccl.api.HcclException;
import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;

import java.nio.ByteBuffer;

/**
 * Some ranks of a group, seen as a group of their own: rank {@code i} here is {@code members[i]} of the parent. A
 * hierarchical algorithm runs a flat one within each node and another across nodes through such views. Messages keep
 * their tags: the views a hierarchical algorithm uses at once never share a pair of ranks (one holds ranks of this
 * node, the other ranks of other nodes), so a flat algorithm's tags cannot meet themselves. A view can also mark
 * its tags ({@link #SubGroup(PeerGroup, int[], int)}), so that the same flat algorithm run on several pieces of a
 * buffer at once between the same ranks keeps each piece's messages apart.
 */
final class SubGroup implements PeerGroup
{
    /** The largest tag mark. */
    static final int MAX_MARK = 0xFF;
    /** The mark's place in a tag: the top byte of {@link dev.hccl.api.spi.Tags}' 24-bit step field. */
    private static final int MARK_SHIFT = 48;

    private final PeerGroup parent;
    private final int[] members;
    private final int rank;
    /** XORed into every tag: a mark in the step field's top byte, which no flat algorithm's step reaches. */
    private final long tagMark;
    /** The view's own scratch when it runs on a thread other than the operation's; null: the parent's. */
    private final ScratchBuffers ownScratch;
    /** Its members' nodes, made when first asked (immutable, so a race makes equal copies). */
    private RankLayout layout;

    /**
     * @param parent  the whole group.
     * @param members the parent ranks that form this view, in their order here; the parent's own rank among them.
     */
    SubGroup(final PeerGroup parent, final int[] members)
    {
        this(parent, members, 0);
    }

    /**
     * A view whose messages carry a mark of their own in their tags.
     *
     * @param parent  the whole group.
     * @param members the parent ranks that form this view, in their order here; the parent's own rank among them.
     * @param mark    0 to 255; 0 leaves tags as they are.
     */
    SubGroup(final PeerGroup parent, final int[] members, final int mark)
    {
        this(parent, members, mark, null);
    }

    /**
     * A view for a thread other than the operation's: it keeps the parent's ranks and tags, but takes scratch from
     * its own buffers, which {@link PeerGroup} requires of such a thread.
     *
     * @param parent  the whole group.
     * @param members the parent ranks that form this view, in their order here; the parent's own rank among them.
     * @param mark    0 to 255; 0 leaves tags as they are.
     * @param scratch the calling thread's scratch, at least {@link PeerGroup#SCRATCH_SLOTS} slots.
     * @return the view.
     */
    static SubGroup onOtherThread(
        final PeerGroup parent, final int[] members, final int mark, final ScratchBuffers scratch)
    {
        return new SubGroup(parent, members, mark, scratch);
    }

    private SubGroup(final PeerGroup parent, final int[] members, final int mark, final ScratchBuffers ownScratch)
    {
        this.ownScratch = ownScratch;
        if (mark < 0 || mark > MAX_MARK)
        {
            throw new IllegalArgumentException("mark must be 0 to " + MAX_MARK + ", got " + mark);
        }
        this.tagMark = (long)mark << MARK_SHIFT;
        this.parent = parent;
        this.members = members.clone();
        int mine = -1;
        for (int i = 0; i < members.length; i++)
        {
            if (members[i] == parent.rank())
            {
                mine = i;
            }
        }
        if (mine < 0)
        {
            throw new IllegalArgumentException("rank " + parent.rank() + " is not among the members");
        }
        this.rank = mine;
    }

    /**
     * The group with its ranks ordered by node, then by rank ({@link RankLayout#byNode()}), so that a ring through it
     * visits each node's ranks one after another; the group itself when its ranks already come so (each node's ranks
     * consecutive, as the nodes are numbered in order of their lowest ranks).
     *
     * @param group the whole group.
     * @return a view in node order, or {@code group}.
     */
    static PeerGroup byNode(final PeerGroup group)
    {
        final RankLayout layout = group.layout();
        return layout.contiguous() ? group : new SubGroup(group, layout.byNode());
    }

    /**
     * The rank of {@code group} behind rank {@code i} of the view {@link #byNode} made of it.
     *
     * @param group the group given to {@link #byNode}.
     * @param view  what it returned: {@code group} itself, or a view of it.
     * @param i     a rank of the view.
     * @return the rank in {@code group}.
     */
    static int member(final PeerGroup group, final PeerGroup view, final int i)
    {
        return view == group ? i : ((SubGroup)view).members[i];
    }

    @Override
    public int rank()
    {
        return rank;
    }

    @Override
    public int size()
    {
        return members.length;
    }

    @Override
    public Request send(final int peer, final long tag, final ByteBuffer src, final int offset, final int length)
    {
        return parent.send(members[peer], tag ^ tagMark, src, offset, length);
    }

    @Override
    public Request recv(final int peer, final long tag, final ByteBuffer dst, final int offset, final int length)
    {
        return parent.recv(members[peer], tag ^ tagMark, dst, offset, length);
    }

    @Override
    public Request recvReduce(
        final int peer, final long tag, final ByteBuffer dst, final int offset, final int length, final Reducer reducer)
    {
        return parent.recvReduce(members[peer], tag ^ tagMark, dst, offset, length, reducer);
    }

    @Override
    public Request recvReduce(
        final int peer, final long tag, final ByteBuffer dst, final int offset, final int length, final Reducer reducer,
        final ByteBuffer left, final int leftOffset)
    {
        return parent.recvReduce(members[peer], tag ^ tagMark, dst, offset, length, reducer, left, leftOffset);
    }

    @Override
    public void await(final Request request)
    {
        parent.await(request);
    }

    @Override
    public ByteBuffer scratch(final int slot, final int bytes)
    {
        if (ownScratch != null)
        {
            return ownScratch.get(slot, bytes);
        }
        return parent.scratch(slot, bytes);
    }

    @Override
    public int segmentBytes()
    {
        return parent.segmentBytes();
    }

    /**
     * The parent's nodes of this view's members, numbered afresh in order of their lowest ranks here.
     *
     * @return the layout.
     */
    /**
     * {@inheritDoc}
     * <p>
     * The parent's arena when this view's ranks are exactly its members, in its order (a node's ranks, as a
     * hierarchical algorithm's level 0 takes them): member {@code m} is then rank {@code m} here. Else null, since an
     * arena's steps need every member and no one else.
     */
    @Override
    public NodeArena arena()
    {
        final NodeArena whole = parent.arena();
        if (null == whole || whole.members() != members.length)
        {
            return null;
        }
        for (int m = 0; m < members.length; m++)
        {
            if (whole.rankOf(m) != members[m])
            {
                return null;
            }
        }
        return new ArenaView(whole);
    }

    @Override
    public void awaitSignal(final int index, final long atLeast, final int writer)
    {
        parent.awaitSignal(index, atLeast, members[writer]);
    }

    @Override
    public OpDescriptor operation()
    {
        return parent.operation();
    }

    @Override
    public HcclException mismatch(final int peer, final OpDescriptor theirs)
    {
        return parent.mismatch(members[peer], theirs);
    }

    @Override
    public RankLayout layout()
    {
        RankLayout made = layout;
        if (made == null)
        {
            made = RankLayout.of(members.length, peer -> parent.node(members[peer]));
            layout = made;
        }
        return made;
    }
}
