/**
 * The TCP transport of hccl-java, on Netty 4.2 (epoll when available, NIO otherwise).
 * <p>
 * {@link dev.hccl.transport.netty.NettyTransport} is the only public type: bind, publish
 * {@link dev.hccl.transport.netty.NettyTransport#listenAddress()}, connect, then use one
 * {@link dev.hccl.api.spi.Link} per peer. Every connection opens with an authenticated handshake (see
 * {@code Handshake}) and then carries frames with a fixed 48-byte big-endian header (see {@code Frames}). Payloads
 * are sent without copying and handed to the receiver's {@link dev.hccl.api.spi.MessageSink} as they arrive, without
 * being accumulated.
 */
package dev.hccl.transport.netty;
