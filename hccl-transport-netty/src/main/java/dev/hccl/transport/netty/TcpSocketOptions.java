package dev.hccl.transport.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelOption;
import io.netty.channel.epoll.EpollChannelOption;

import java.time.Duration;

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

    /** Sets one option where it belongs: an acceptor's child option, a dialer's option. */
    private interface OptionSink
    {
        <T> void set(ChannelOption<T> option, T value);
    }

    /**
     * Sets the options on the connections a listening bootstrap accepts.
     *
     * @param acceptor the bootstrap.
     */
    void applyTo(final ServerBootstrap acceptor)
    {
        apply(new OptionSink()
        {
            @Override
            public <T> void set(final ChannelOption<T> option, final T value)
            {
                acceptor.childOption(option, value);
            }
        });
    }

    /**
     * Sets the options on the connection a dialing bootstrap opens.
     *
     * @param dialer the bootstrap.
     */
    void applyTo(final Bootstrap dialer)
    {
        apply(new OptionSink()
        {
            @Override
            public <T> void set(final ChannelOption<T> option, final T value)
            {
                dialer.option(option, value);
            }
        });
    }

    /**
     * How long the kernel lets sent data go unacknowledged (a peer's full receive window included) before it fails the
     * socket ({@code TCP_USER_TIMEOUT}): a backstop, later than the heartbeat's verdict (the timeout plus a tick of
     * up to a second), so that a frozen peer is named in the heartbeat's words ("no word from rank r ... frozen")
     * rather than as a bare "Connection timed out".
     *
     * @param heartbeatTimeout the heartbeat timeout.
     * @return milliseconds: the timeout and half of it again, at least two seconds more.
     */
    static int kernelTimeoutMillis(final Duration heartbeatTimeout)
    {
        final long millis = Math.max(1000, heartbeatTimeout.toMillis());
        return (int)Math.min(Integer.MAX_VALUE, millis + Math.max(2000, millis / 2));
    }

    /**
     * Sets the options on a connection: {@code TCP_NODELAY}, {@code SO_KEEPALIVE}, the read buffers; with epoll,
     * unacknowledged data fails the socket after {@link #kernelTimeoutMillis} ({@code TCP_USER_TIMEOUT}), and
     * keepalive probes start after the heartbeat timeout idle, so a peer whose host vanished is found even while
     * nothing is sent.
     */
    private void apply(final OptionSink option)
    {
        option.set(ChannelOption.TCP_NODELAY, true);
        option.set(ChannelOption.SO_KEEPALIVE, true);
        option.set(ChannelOption.RECVBUF_ALLOCATOR, readBuffers());
        if (!epoll)
        {
            return;
        }
        final int seconds = (int)Math.max(1, Math.min(Integer.MAX_VALUE / 1000, heartbeatTimeout.toSeconds()));
        option.set(EpollChannelOption.TCP_USER_TIMEOUT, kernelTimeoutMillis(heartbeatTimeout));
        option.set(EpollChannelOption.TCP_KEEPIDLE, seconds);
        option.set(EpollChannelOption.TCP_KEEPINTVL, Math.max(1, seconds / 5));
        option.set(EpollChannelOption.TCP_KEEPCNT, 5);
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
