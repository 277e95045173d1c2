package dev.hccl.core.op;

import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;

/**
 * The {@link Communicator}'s operation calls, each handed to {@link Operations} with whether the call blocks (a
 * blocking call holds its lane until its operation completes, {@link IssueGuard}); the communicator extends it with
 * everything else.
 */
public abstract class CommunicatorCalls implements Communicator
{
    /** For the communicator. */
    protected CommunicatorCalls()
    {
    }

    /**
     * @return the communicator's operations.
     */
    protected abstract Operations ops();

    // ---------------------------------------------------------------- collectives

    @Override
    public void allReduce(
        final ByteBuffer send, final ByteBuffer recv, final long count, final DataType type, final ReduceOp op)
    {
        ops().allReduce(send, recv, count, type, op, true).join();
    }

    @Override
    public CommFuture allReduceAsync(
        final ByteBuffer send, final ByteBuffer recv, final long count, final DataType type, final ReduceOp op)
    {
        return ops().allReduce(send, recv, count, type, op, false);
    }

    @Override
    public void allGather(final ByteBuffer send, final ByteBuffer recv, final long sendCount, final DataType type)
    {
        ops().allGather(send, recv, sendCount, type, true).join();
    }

    @Override
    public CommFuture allGatherAsync(
        final ByteBuffer send, final ByteBuffer recv, final long sendCount, final DataType type)
    {
        return ops().allGather(send, recv, sendCount, type, false);
    }

    @Override
    public void reduceScatter(
        final ByteBuffer send, final ByteBuffer recv, final long recvCount, final DataType type, final ReduceOp op)
    {
        ops().reduceScatter(send, recv, recvCount, type, op, true).join();
    }

    @Override
    public CommFuture reduceScatterAsync(
        final ByteBuffer send, final ByteBuffer recv, final long recvCount, final DataType type, final ReduceOp op)
    {
        return ops().reduceScatter(send, recv, recvCount, type, op, false);
    }

    @Override
    public void broadcast(final ByteBuffer buf, final long count, final DataType type, final int root)
    {
        ops().broadcast(buf, count, type, root, true).join();
    }

    @Override
    public CommFuture broadcastAsync(final ByteBuffer buf, final long count, final DataType type, final int root)
    {
        return ops().broadcast(buf, count, type, root, false);
    }

    @Override
    public void reduce(
        final ByteBuffer send, final ByteBuffer recv, final long count, final DataType type, final ReduceOp op,
        final int root)
    {
        ops().reduce(send, recv, count, type, op, root, true).join();
    }

    @Override
    public CommFuture reduceAsync(
        final ByteBuffer send, final ByteBuffer recv, final long count, final DataType type, final ReduceOp op,
        final int root)
    {
        return ops().reduce(send, recv, count, type, op, root, false);
    }

    @Override
    public void allToAll(final ByteBuffer send, final ByteBuffer recv, final long countPerRank, final DataType type)
    {
        ops().allToAll(send, recv, countPerRank, type, true).join();
    }

    @Override
    public CommFuture allToAllAsync(
        final ByteBuffer send, final ByteBuffer recv, final long countPerRank, final DataType type)
    {
        return ops().allToAll(send, recv, countPerRank, type, false);
    }

    @Override
    public void send(final ByteBuffer buf, final long count, final DataType type, final int peer)
    {
        ops().send(buf, count, type, peer, true).join();
    }

    @Override
    public CommFuture sendAsync(final ByteBuffer buf, final long count, final DataType type, final int peer)
    {
        return ops().send(buf, count, type, peer, false);
    }

    @Override
    public void recv(final ByteBuffer buf, final long count, final DataType type, final int peer)
    {
        ops().recv(buf, count, type, peer, true).join();
    }

    @Override
    public CommFuture recvAsync(final ByteBuffer buf, final long count, final DataType type, final int peer)
    {
        return ops().recv(buf, count, type, peer, false);
    }

    @Override
    public void barrier()
    {
        ops().barrier(true).join();
    }

    @Override
    public CommFuture barrierAsync()
    {
        return ops().barrier(false);
    }

    // ---------------------------------------------------------------- V collectives, scatter, gather

    @Override
    public void allGatherV(
        final ByteBuffer send, final long sendCount, final ByteBuffer recv, final long[] recvCounts,
        final long[] recvDispls, final DataType type)
    {
        ops().allGatherV(send, sendCount, recv, recvCounts, recvDispls, type, true).join();
    }

    @Override
    public CommFuture allGatherVAsync(
        final ByteBuffer send, final long sendCount, final ByteBuffer recv, final long[] recvCounts,
        final long[] recvDispls, final DataType type)
    {
        return ops().allGatherV(send, sendCount, recv, recvCounts, recvDispls, type, false);
    }

    @Override
    public void reduceScatterV(
        final ByteBuffer send, final long[] sendCounts, final long[] sendDispls, final ByteBuffer recv,
        final long recvCount, final DataType type, final ReduceOp op)
    {
        ops().reduceScatterV(send, sendCounts, sendDispls, recv, recvCount, type, op, true).join();
    }

    @Override
    public CommFuture reduceScatterVAsync(
        final ByteBuffer send, final long[] sendCounts, final long[] sendDispls, final ByteBuffer recv,
        final long recvCount, final DataType type, final ReduceOp op)
    {
        return ops().reduceScatterV(send, sendCounts, sendDispls, recv, recvCount, type, op, false);
    }

    @Override
    public void allToAllV(
        final ByteBuffer send, final long[] sendCounts, final long[] sendDispls, final ByteBuffer recv,
        final long[] recvCounts, final long[] recvDispls, final DataType type)
    {
        ops().allToAllV(send, sendCounts, sendDispls, recv, recvCounts, recvDispls, type, true).join();
    }

    @Override
    public CommFuture allToAllVAsync(
        final ByteBuffer send, final long[] sendCounts, final long[] sendDispls, final ByteBuffer recv,
        final long[] recvCounts, final long[] recvDispls, final DataType type)
    {
        return ops().allToAllV(send, sendCounts, sendDispls, recv, recvCounts, recvDispls, type, false);
    }

    @Override
    public void scatter(
        final ByteBuffer send, final ByteBuffer recv, final long recvCount, final DataType type, final int root)
    {
        ops().scatter(send, recv, recvCount, type, root, true).join();
    }

    @Override
    public CommFuture scatterAsync(
        final ByteBuffer send, final ByteBuffer recv, final long recvCount, final DataType type, final int root)
    {
        return ops().scatter(send, recv, recvCount, type, root, false);
    }

    @Override
    public void gather(
        final ByteBuffer send, final ByteBuffer recv, final long sendCount, final DataType type, final int root)
    {
        ops().gather(send, recv, sendCount, type, root, true).join();
    }

    @Override
    public CommFuture gatherAsync(
        final ByteBuffer send, final ByteBuffer recv, final long sendCount, final DataType type, final int root)
    {
        return ops().gather(send, recv, sendCount, type, root, false);
    }
}
