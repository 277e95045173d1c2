package dev.hccl.core.bootstrap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The key-value rendezvous store that rank 0 serves over TCP, as torchrun's TCPStore: {@code set}, blocking
 * {@code get} with a timeout, atomic {@code add}, and {@code check} of which keys exist. A thread per client: the
 * store is used only while communicators are created, by at most world-size clients.
 */
public final class StoreServer implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(StoreServer.class);
    private static final int HELLO_TIMEOUT_MILLIS = 30_000;

    private final ServerSocket server;
    private final Map<String, byte[]> values = new HashMap<>();
    private final Set<Socket> clients = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    private volatile boolean closed;
    private String abortReason;

    private StoreServer(final ServerSocket server)
    {
        this.server = server;
        acceptor = new Thread(this::acceptLoop, "hccl-store-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Starts a store.
     *
     * @param bind where to listen; port 0 picks a free one.
     * @return the running store.
     * @throws IOException when the address cannot be bound (the port is taken, say).
     */
    public static StoreServer start(final InetSocketAddress bind) throws IOException
    {
        final ServerSocket socket = new ServerSocket();
        socket.setReuseAddress(true);
        try
        {
            socket.bind(bind, 128);
        }
        catch (final IOException ex)
        {
            socket.close();
            throw ex;
        }
        final StoreServer store = new StoreServer(socket);
        LOG.debug("rendezvous store listening on {}", socket.getLocalSocketAddress());
        return store;
    }

    /**
     * The port the store listens on.
     *
     * @return the port.
     */
    public int port()
    {
        return server.getLocalPort();
    }

    private void acceptLoop()
    {
        while (!closed)
        {
            try
            {
                final Socket client = server.accept();
                client.setTcpNoDelay(true);
                clients.add(client);
                final Thread t = new Thread(() -> serve(client), "hccl-store-" + client.getRemoteSocketAddress());
                t.setDaemon(true);
                t.start();
            }
            catch (final IOException ex)
            {
                if (!closed)
                {
                    LOG.warn("rendezvous store: accept failed: {}", ex.toString());
                    try
                    {
                        Thread.sleep(100); // out of file descriptors, say: do not spin
                    }
                    catch (final InterruptedException ie)
                    {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
            }
        }
    }

    private void serve(final Socket client)
    {
        try (client;
            DataInputStream in = new DataInputStream(new BufferedInputStream(client.getInputStream()));
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(client.getOutputStream())))
        {
            client.setSoTimeout(HELLO_TIMEOUT_MILLIS); // a silent connection must not pin a thread for long
            final int magic = in.readInt();
            client.setSoTimeout(0); // a rank may wait long between requests while others arrive
            if (magic != StoreProtocol.MAGIC)
            {
                LOG.warn("rendezvous store: {} is not an hccl client (bad magic); closing", client.getRemoteSocketAddress());
                return;
            }
            while (!closed)
            {
                final byte code;
                try
                {
                    code = in.readByte();
                }
                catch (final EOFException ex)
                {
                    return;
                }
                final String key = in.readUTF();
                switch (code)
                {
                    case StoreProtocol.SET:
                        set(key, readValue(in));
                        out.writeByte(StoreProtocol.OK);
                        break;
                    case StoreProtocol.GET:
                        final byte[] value = get(key, in.readLong());
                        final String aborted = abortReason();
                        if (value == null && aborted != null)
                        {
                            out.writeByte(StoreProtocol.ABORTED);
                            out.writeUTF(aborted);
                        }
                        else if (value == null)
                        {
                            out.writeByte(StoreProtocol.TIMEOUT);
                        }
                        else
                        {
                            out.writeByte(StoreProtocol.OK);
                            out.writeInt(value.length);
                            out.write(value);
                        }
                        break;
                    case StoreProtocol.ADD:
                        out.writeLong(add(key, in.readLong()));
                        break;
                    case StoreProtocol.CHECK:
                        final int n = in.readInt();
                        if (n < 0 || n > StoreProtocol.MAX_KEYS)
                        {
                            throw new IOException("bad key count " + n);
                        }
                        out.writeInt(n);
                        for (int i = 0; i < n; i++)
                        {
                            out.writeBoolean(contains(in.readUTF()));
                        }
                        break;
                    default:
                        throw new IOException("unknown request code " + code);
                }
                out.flush();
            }
        }
        catch (final SocketException | EOFException ex)
        {
            LOG.debug("rendezvous store: client {} left: {}", client.getRemoteSocketAddress(), ex.toString());
        }
        catch (final IOException ex)
        {
            LOG.warn("rendezvous store: closing client {}: {}", client.getRemoteSocketAddress(), ex.toString());
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        finally
        {
            clients.remove(client);
        }
    }

    private static byte[] readValue(final DataInputStream in) throws IOException
    {
        final int length = in.readInt();
        if (length < 0 || length > StoreProtocol.MAX_VALUE_BYTES)
        {
            throw new IOException("bad value length " + length);
        }
        final byte[] value = new byte[length];
        in.readFully(value);
        return value;
    }

    private synchronized void set(final String key, final byte[] value)
    {
        values.put(key, value);
        notifyAll();
    }

    private synchronized byte[] get(final String key, final long timeoutMillis) throws InterruptedException
    {
        final long deadline = System.nanoTime() + Math.max(0, timeoutMillis) * 1_000_000L;
        byte[] value;
        while ((value = values.get(key)) == null && !closed && abortReason == null)
        {
            final long leftMillis = (deadline - System.nanoTime()) / 1_000_000L;
            if (leftMillis <= 0)
            {
                return null;
            }
            wait(leftMillis);
        }
        return value;
    }

    private synchronized String abortReason()
    {
        return abortReason;
    }

    /**
     * Gives up the rendezvous: every waiting and later {@code get} of a missing key answers with the reason, so that
     * every rank reports rank 0's verdict instead of a lost connection.
     *
     * @param reason why, in words.
     */
    public synchronized void abort(final String reason)
    {
        abortReason = reason;
        notifyAll();
    }

    /**
     * Waits until every client has disconnected, at most {@code millis}: after an abort, so that they read it.
     *
     * @param millis the longest wait.
     */
    public void awaitClientsGone(final long millis)
    {
        final long deadline = System.nanoTime() + millis * 1_000_000L;
        while (!clients.isEmpty() && System.nanoTime() < deadline)
        {
            try
            {
                Thread.sleep(10);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private synchronized long add(final String key, final long delta)
    {
        final byte[] old = values.get(key);
        final long sum = (old == null ? 0 : Long.parseLong(new String(old, StandardCharsets.US_ASCII)))
            + delta;
        values.put(key, Long.toString(sum).getBytes(StandardCharsets.US_ASCII));
        notifyAll();
        return sum;
    }

    private synchronized boolean contains(final String key)
    {
        return values.containsKey(key);
    }

    /**
     * Stops serving and disconnects every client.
     */
    @Override
    public void close()
    {
        closed = true;
        try
        {
            server.close();
        }
        catch (final IOException ignore)
        {
            // closing anyway
        }
        for (final Socket s : clients)
        {
            try
            {
                s.close();
            }
            catch (final IOException ignore)
            {
                // closing anyway
            }
        }
        synchronized (this)
        {
            notifyAll();
        }
    }
}
