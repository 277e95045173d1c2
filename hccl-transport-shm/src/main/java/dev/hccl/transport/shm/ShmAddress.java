package dev.hccl.transport.shm;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;

/**
 * What a rank's end of the shared-memory transport publishes to its peers: the directory its segments live in and
 * the identity of its process, which the peers watch for its death.
 * <p>
 * Encoding, big-endian: magic {@code "HCSM"} (4 bytes), format version (1 byte), pid (8), process start in epoch
 * milliseconds or 0 when unknown (8), directory path length (2) and the path in UTF-8.
 *
 * @param dir          the directory's absolute path.
 * @param pid          the process id, as this process's pid namespace sees it.
 * @param startMillis  when the process started, in epoch milliseconds, or 0 when the JDK cannot tell.
 */
record ShmAddress(String dir, long pid, long startMillis)
{
    /** First four bytes: "HCSM". */
    static final int MAGIC = 0x4843534D;
    /**
     * Format of this encoding and of the handshake behind it; a peer that publishes another one is not connected over
     * shared memory. 2: the segments' names are keyed with the job's key ({@link ShmNames}).
     */
    static final int VERSION = 2;

    private static final int FIXED_LENGTH = 4 + 1 + 8 + 8 + 2;
    private static final int MAX_DIR_BYTES = 0xFFFF;

    /**
     * The address of this process with its segments in {@code dir}.
     *
     * @param dir the directory, absolute.
     * @return the address.
     */
    static ShmAddress ofThisProcess(final Path dir)
    {
        final ProcessHandle self = ProcessHandle.current();
        return new ShmAddress(dir.toString(), self.pid(), startMillis(self));
    }

    /**
     * When a process started.
     *
     * @param process the process.
     * @return epoch milliseconds, or 0 when unknown.
     */
    static long startMillis(final ProcessHandle process)
    {
        return process.info().startInstant().map(Instant::toEpochMilli).orElse(0L);
    }

    /**
     * The bytes to publish.
     *
     * @return the encoding.
     * @throws IllegalArgumentException when the path is longer than 65535 bytes in UTF-8.
     */
    byte[] encode()
    {
        final byte[] path = dir.getBytes(StandardCharsets.UTF_8);
        if (path.length > MAX_DIR_BYTES)
        {
            throw new IllegalArgumentException("shared-memory directory path of " + path.length + " bytes: " + dir);
        }
        return ByteBuffer.allocate(FIXED_LENGTH + path.length)
            .putInt(MAGIC)
            .put((byte)VERSION)
            .putLong(pid)
            .putLong(startMillis)
            .putShort((short)path.length)
            .put(path)
            .array();
    }

    /**
     * Reads a peer's address.
     *
     * @param bytes what the peer published, or null.
     * @return the address, or null when the bytes are absent, of another format or version, or malformed.
     */
    static ShmAddress decode(final byte[] bytes)
    {
        if (null == bytes || bytes.length < FIXED_LENGTH)
        {
            return null;
        }
        try
        {
            final ByteBuffer b = ByteBuffer.wrap(bytes);
            if (MAGIC != b.getInt() || VERSION != b.get())
            {
                return null;
            }
            final long pid = b.getLong();
            final long start = b.getLong();
            final int length = b.getShort() & 0xFFFF;
            if (length != b.remaining() || 0 == length)
            {
                return null;
            }
            final byte[] path = new byte[length];
            b.get(path);
            return new ShmAddress(new String(path, StandardCharsets.UTF_8), pid, start);
        }
        catch (final BufferUnderflowException ex)
        {
            return null;
        }
    }
}
