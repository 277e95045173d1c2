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
