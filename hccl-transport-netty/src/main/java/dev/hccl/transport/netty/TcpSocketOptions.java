package dev.hccl.transport.netty;

import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelOption;
import io.netty.channel.epoll.EpollChannelOption;

import java.time.Duration;
import java.util.function.BiConsumer;

/**
 * The socket options every connection of the TCP transport takes, accepted or dialed: no Nagle delay, read buffers
 * sized for collectives, and the kernel's side of liveness.
 */
final class TcpSocketOptions
{
    /** Smallest read buffer. */
    static final int READ_BUFFER_MIN_BYTES = 4 * 1024;
    /** First read buffer. */
    static final int READ_BUFFER_INITIAL_BYTES = 64 * 1024;
    /** Largest read buffer. */
    static final int READ_BUFFER_MAX_BYTES = 1024 * 1024;

    /** Whether the channels are epoll's, which take the kernel's TCP_USER_TIMEOUT. */
    private final boolean epoll;
    private final Duration heartbeatTimeout;

    /**
     * Options for the transport's connections.
     *
     * @param epoll            whether the channels are epoll's.
     * @param heartbeatTimeout how long a silent peer is given, which the kernel's timeouts follow.
     */
    TcpSocketOptions(final boolean epoll, final Duration heartbeatTimeout)
    {
        this.epoll = epoll;
        this.heartbeatTimeout = heartbeatTimeout;
    }

    /**
     * Sets the options on a connection: {@code TCP_NODELAY}, {@code SO_KEEPALIVE}, the read buffers; with epoll,
     * unacknowledged data fails the socket after the heartbeat timeout ({@code TCP_USER_TIMEOUT}), and keepalive
     * probes start after as long idle, so a peer whose host vanished is found even while nothing is sent.
     *
     * @param option sets one option.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    void apply(final BiConsumer<ChannelOption, Object> option)
    {
        option.accept(ChannelOption.TCP_NODELAY, true);
        option.accept(ChannelOption.SO_KEEPALIVE, true);
        option.accept(ChannelOption.RCVBUF_ALLOCATOR, readBuffers());
        if (!epoll)
        {
            return;
        }
        final int seconds = (int)Math.max(1, Math.min(Integer.MAX_VALUE / 1000, heartbeatTimeout.toSeconds()));
        option.accept(EpollChannelOption.TCP_USER_TIMEOUT, seconds * 1000);
        option.accept(EpollChannelOption.TCP_KEEPIDLE, seconds);
        option.accept(EpollChannelOption.TCP_KEEPINTVL, Math.max(1, seconds / 5));
        option.accept(EpollChannelOption.TCP_KEEPCNT, 5);
    }

    /**
     * Read buffers that grow up to {@link #READ_BUFFER_MAX_BYTES} under load: collectives move megabytes per
     * message, and each read costs a system call and a pass of the receive sink, so 64 KiB reads (Netty's default
     * ceiling) cut the bandwidth.
     */
    private static AdaptiveRecvByteBufAllocator readBuffers()
    {
        return new AdaptiveRecvByteBufAllocator(READ_BUFFER_MIN_BYTES, READ_BUFFER_INITIAL_BYTES,
            READ_BUFFER_MAX_BYTES);
    }
}
