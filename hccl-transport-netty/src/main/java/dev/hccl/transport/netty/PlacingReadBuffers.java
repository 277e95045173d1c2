package dev.hccl.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelConfig;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

/**
 * The read buffers of one channel: Netty's adaptive ones (growing up to {@link NettyTransport#READ_BUFFER_MAX_BYTES}
 * under load), except while the channel's {@link FrameReceiver} is in the middle of a large payload that its sink
 * only copies: then the read goes straight into the destination, a view of which it offers, and the user-space copy
 * from a read buffer into place is saved (Open MPI's TCP path reads into place too). One instance per channel, set
 * when the channel is initialised, before its first read.
 */
final class PlacingReadBuffers implements RecvByteBufAllocator
{
    private final AdaptiveRecvByteBufAllocator buffers = new AdaptiveRecvByteBufAllocator(
        NettyTransport.READ_BUFFER_MIN_BYTES, NettyTransport.READ_BUFFER_INITIAL_BYTES,
        NettyTransport.READ_BUFFER_MAX_BYTES);
    /** Set once the handshake is over; read on the channel's event loop only. */
    private FrameReceiver receiver;

    void attach(final FrameReceiver receiver)
    {
        this.receiver = receiver;
    }

    @Override
    public Handle newHandle()
    {
        return new PlacingHandle((ExtendedHandle)buffers.newHandle());
    }

    /**
     * Netty's handle, but for {@link #allocate} and {@link #lastBytesRead(int)}, which let the receiver place a read
     * and learn how much landed.
     */
    private final class PlacingHandle implements ExtendedHandle
    {
        private final ExtendedHandle delegate;
        private boolean placing;

        PlacingHandle(final ExtendedHandle delegate)
        {
            this.delegate = delegate;
        }

        @Override
        public ByteBuf allocate(final ByteBufAllocator alloc)
        {
            final FrameReceiver r = receiver;
            final ByteBuf placed = r == null ? null : r.offerPlacement();
            placing = placed != null;
            return placing ? placed : delegate.allocate(alloc);
        }

        @Override
        public void lastBytesRead(final int bytes)
        {
            if (placing)
            {
                placing = false;
                receiver.placementRead(bytes);
            }
            delegate.lastBytesRead(bytes);
        }

        @Override
        public int guess()
        {
            return delegate.guess();
        }

        @Override
        public void reset(final ChannelConfig config)
        {
            delegate.reset(config);
        }

        @Override
        public void incMessagesRead(final int numMessages)
        {
            delegate.incMessagesRead(numMessages);
        }

        @Override
        public int lastBytesRead()
        {
            return delegate.lastBytesRead();
        }

        @Override
        public void attemptedBytesRead(final int bytes)
        {
            delegate.attemptedBytesRead(bytes);
        }

        @Override
        public int attemptedBytesRead()
        {
            return delegate.attemptedBytesRead();
        }

        @Override
        public boolean continueReading()
        {
            return delegate.continueReading();
        }

        @Override
        public boolean continueReading(final UncheckedBooleanSupplier maybeMoreDataSupplier)
        {
            return delegate.continueReading(maybeMoreDataSupplier);
        }

        @Override
        public void readComplete()
        {
            delegate.readComplete();
        }
    }
}
