package dev.hccl.tools.topo;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Topology;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * What one rank says about itself, exchanged as fixed-size records in one allGather so that rank 0 can print what no
 * communicator property carries (the process id, the address).
 *
 * @param rank      the rank.
 * @param host      its host name.
 * @param node      its node's index in {@link Topology}.
 * @param nodeId    its node's identity (host name, boot id and network namespace, or {@code HCCL_NODE_ID}).
 * @param localRank its rank within the node.
 * @param pid       its process id.
 * @param address   the address it was configured to listen on ({@code HCCL_IF_IP}), or empty: the public API does
 *                  not expose the address the library chose.
 */
public record RankRecord(int rank, String host, int node, String nodeId, int localRank, long pid, String address)
{
    /** Bytes per record on the wire. */
    static final int RECORD_BYTES = 512;

    private static final int HEADER_BYTES = 32;
    private static final int HOST_MAX_BYTES = 128;
    private static final int NODE_ID_MAX_BYTES = 256;
    private static final int ADDRESS_MAX_BYTES = RECORD_BYTES - HEADER_BYTES - HOST_MAX_BYTES - NODE_ID_MAX_BYTES;

    /**
     * Gathers every rank's record; every rank of the communicator must call it.
     *
     * @param comm    the communicator.
     * @param address this rank's configured address, or null when none was configured.
     * @return the records, indexed by rank.
     */
    public static List<RankRecord> gather(final Communicator comm, final String address)
    {
        final Topology topology = comm.topology();
        final int node = topology.layout().nodeOf(comm.rank());
        final String host = topology.hostName(node);
        final ByteBuffer mine = ByteBuffer.allocateDirect(RECORD_BYTES).order(ByteOrder.nativeOrder());
        mine.putLong(0, ProcessHandle.current().pid());
        mine.putInt(8, node);
        mine.putInt(12, comm.localRank());
        int at = HEADER_BYTES;
        at = putString(mine, 16, at, host == null || host.isBlank() ? "localhost" : host, HOST_MAX_BYTES);
        at = putString(mine, 20, at, nullToEmpty(topology.nodeId(node)), NODE_ID_MAX_BYTES);
        putString(mine, 24, at, nullToEmpty(address), ADDRESS_MAX_BYTES);

        final int ranks = comm.worldSize();
        final ByteBuffer all = ByteBuffer.allocateDirect(RECORD_BYTES * ranks).order(ByteOrder.nativeOrder());
        comm.allGather(mine, all, RECORD_BYTES, DataType.INT8);
        final List<RankRecord> records = new ArrayList<>(ranks);
        for (int r = 0; r < ranks; r++)
        {
            final ByteBuffer record = all.slice(r * RECORD_BYTES, RECORD_BYTES).order(ByteOrder.nativeOrder());
            int from = HEADER_BYTES;
            final String hostName = getString(record, 16, from, HOST_MAX_BYTES);
            from += HOST_MAX_BYTES;
            final String nodeId = getString(record, 20, from, NODE_ID_MAX_BYTES);
            from += NODE_ID_MAX_BYTES;
            final String addr = getString(record, 24, from, ADDRESS_MAX_BYTES);
            records.add(new RankRecord(r, hostName, record.getInt(8), nodeId, record.getInt(12), record.getLong(0),
                addr));
        }
        return records;
    }

    private static String nullToEmpty(final String s)
    {
        return s == null ? "" : s;
    }

    /**
     * Writes a string's UTF-8 bytes, cut at a character boundary to fit its field, and its length.
     *
     * @return the offset of the next field.
     */
    private static int putString(
        final ByteBuffer buffer, final int lengthAt, final int at, final String value, final int maxBytes)
    {
        String s = value;
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        while (bytes.length > maxBytes)
        {
            s = s.substring(0, s.length() - 1);
            bytes = s.getBytes(StandardCharsets.UTF_8);
        }
        buffer.putInt(lengthAt, bytes.length);
        buffer.put(at, bytes);
        return at + maxBytes;
    }

    private static String getString(final ByteBuffer buffer, final int lengthAt, final int at, final int maxBytes)
    {
        // A length from another process is clamped, never trusted.
        final int length = Math.min(Math.max(buffer.getInt(lengthAt), 0), maxBytes);
        final byte[] bytes = new byte[length];
        buffer.get(at, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
