package dev.hccl.transport.netty;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;

/**
 * The TCP transport's published address: the listening IP address's bytes (4 or 16), then the port as two bytes.
 */
final class TcpAddress
{
    private TcpAddress()
    {
    }

    static byte[] encode(final InetSocketAddress address)
    {
        final byte[] ip = address.getAddress().getAddress();
        return ByteBuffer.allocate(ip.length + 2).put(ip).putShort((short)address.getPort()).array();
    }

    static InetSocketAddress decode(final byte[] bytes)
    {
        if (bytes == null || (bytes.length != 6 && bytes.length != 18))
        {
            throw new IllegalArgumentException("malformed TCP address in the rendezvous store");
        }
        final ByteBuffer buf = ByteBuffer.wrap(bytes);
        final byte[] ip = new byte[bytes.length - 2];
        buf.get(ip);
        try
        {
            return new InetSocketAddress(InetAddress.getByAddress(ip), Short.toUnsignedInt(buf.getShort()));
        }
        catch (final UnknownHostException ex)
        {
            throw new IllegalArgumentException("malformed TCP address in the rendezvous store", ex);
        }
    }
}
