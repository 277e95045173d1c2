package dev.hccl.algorithms;

import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;

import java.nio.ByteBuffer;

/**
 * Some ranks of a group, seen as a group of their own: rank {@code i} here is {@code members[i]} of the parent. A
 * hierarchical algorithm runs a flat one within each node and another across nodes through such views. Messages keep
 * their tags: the views a hierarchical algorithm uses at once never share a pair of ranks (one holds ranks of this
 * node, the other ranks of other nodes), so a flat algorithm's tags cannot meet themselves.
 */
final class SubGroup implements PeerGroup
{
    private final PeerGroup parent;
    private final int[] members;
    private final int rank;

    /**
     * @param parent  the whole group.
     * @param members the parent ranks that form this view, in their order here; the parent's own rank among them.
     */
    SubGroup(final PeerGroup parent, final int[] members)
    {
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
     * The group with its ranks ordered by node, then by rank, so that a ring through it visits each node's ranks
     * one after another; the group itself when its ranks already come so.
     *
     * @param group the whole group.
     * @return a view in node order, or {@code group}.
     */
    static PeerGroup byNode(final PeerGroup group)
    {
        final int n = group.size();
        boolean ordered = true;
        for (int r = 1; r < n && ordered; r++)
        {
            ordered = group.node(r) >= group.node(r - 1);
        }
        if (ordered)
        {
            return group;
        }
        final Integer[] members = new Integer[n];
        for (int r = 0; r < n; r++)
        {
            members[r] = r;
        }
        java.util.Arrays.sort(members, (a, b) -> group.node(a) != group.node(b) ?
            Integer.compare(group.node(a), group.node(b)) : Integer.compare(a, b));
        final int[] order = new int[n];
        for (int i = 0; i < n; i++)
        {
            order[i] = members[i];
        }
        return new SubGroup(group, order);
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
        return parent.send(members[peer], tag, src, offset, length);
    }

    @Override
    public Request recv(final int peer, final long tag, final ByteBuffer dst, final int offset, final int length)
    {
        return parent.recv(members[peer], tag, dst, offset, length);
    }

    @Override
    public Request recvReduce(
        final int peer, final long tag, final ByteBuffer dst, final int offset, final int length, final Reducer reducer)
    {
        return parent.recvReduce(members[peer], tag, dst, offset, length, reducer);
    }

    @Override
    public Request recvReduce(
        final int peer, final long tag, final ByteBuffer dst, final int offset, final int length, final Reducer reducer,
        final ByteBuffer left, final int leftOffset)
    {
        return parent.recvReduce(members[peer], tag, dst, offset, length, reducer, left, leftOffset);
    }

    @Override
    public void await(final Request request)
    {
        parent.await(request);
    }

    @Override
    public ByteBuffer scratch(final int slot, final int bytes)
    {
        return parent.scratch(slot, bytes);
    }

    @Override
    public int segmentBytes()
    {
        return parent.segmentBytes();
    }

    @Override
    public int node(final int peer)
    {
        return parent.node(members[peer]);
    }
}
