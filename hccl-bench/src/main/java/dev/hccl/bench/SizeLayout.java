package dev.hccl.bench;

/**
 * How one benchmark size maps onto an operation's buffers, in elements, as nccl-tests' {@code getCollByteCount}
 * computes it.
 *
 * @param sendCount         elements in the send buffer.
 * @param recvCount         elements in the receive buffer.
 * @param paramCount        the count argument of the call (per rank for allGather, reduceScatter and allToAll); the
 *                          table's {@code count} column.
 * @param sendInPlaceOffset in place, the send buffer starts this many elements times the rank into the receive buffer.
 * @param recvInPlaceOffset in place, the receive buffer starts this many elements times the rank into the receive
 *                          buffer.
 */
public record SizeLayout(
    long sendCount, long recvCount, long paramCount, long sendInPlaceOffset, long recvInPlaceOffset)
{
    /**
     * The table's {@code size} column: the larger of the send and receive buffers.
     *
     * @param elementSize bytes per element.
     * @return bytes.
     */
    public long bytes(final int elementSize)
    {
        return Math.max(sendCount, recvCount) * elementSize;
    }
}
