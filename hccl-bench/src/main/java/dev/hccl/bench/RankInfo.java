package dev.hccl.bench;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Topology;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Who a rank is, for the {@code #  Rank ...} lines of the header: exchanged as fixed-size records in one allGather, so
 * that rank 0 can print every rank's process id, which no communicator property carries.
 *
 * @param rank      the rank.
 * @param pid       its process id.
 * @param host      its host name.
 * @param localRank its rank within the node.
 */
public record RankInfo(int rank, long pid, String host, int localRank)
{
    /** Bytes per record on the wire. */
    static final int RECORD_BYTES = 256;

    private static final int HOST_OFFSET = 16;
    private static final int HOST_MAX_BYTES = RECORD_BYTES - HOST_OFFSET;

    /**
     * Gathers every rank's record; every rank of the communicator must call it.
     *
     * @param comm the communicator.
     * @return the records, indexed by rank.
     */
    public static List<RankInfo> gather(final Communicator comm)
    {
        final ByteBuffer mine = ByteBuffer.allocateDirect(RECORD_BYTES).order(ByteOrder.nativeOrder());
        final byte[] host = truncate(hostName(comm));
        mine.putLong(0, ProcessHandle.current().pid());
        mine.putInt(8, comm.localRank());
        mine.putInt(12, host.length);
        mine.put(HOST_OFFSET, host);
        final int ranks = comm.worldSize();
        final ByteBuffer all = ByteBuffer.allocateDirect(RECORD_BYTES * ranks).order(ByteOrder.nativeOrder());
        comm.allGather(mine, all, RECORD_BYTES, DataType.INT8);
        final List<RankInfo> infos = new ArrayList<>(ranks);
        for (int r = 0; r < ranks; r++)
        {
            final int at = r * RECORD_BYTES;
            final int length = Math.min(Math.max(all.getInt(at + 12), 0), HOST_MAX_BYTES);
            final byte[] name = new byte[length];
            all.get(at + HOST_OFFSET, name);
            infos.add(new RankInfo(r, all.getLong(at), new String(name, StandardCharsets.UTF_8), all.getInt(at + 8)));
        }
        return infos;
    }

    /**
     * The header line, nccl-tests' {@code #  Rank %2d Group %2d Pid %6d on %10s device %2d ...} with the local rank in
     * place of the device.
     *
     * @return the line, without line end.
     */
    public String headerLine()
    {
        return String.format(Locale.ROOT, "#  Rank %2d Group %2d Pid %6d on %10s localRank %2d", rank, 0, pid, host,
            localRank);
    }

    private static String hostName(final Communicator comm)
    {
        final Topology topology = comm.topology();
        final String name = topology.hostName(topology.layout().nodeOf(comm.rank()));
        return name == null || name.isBlank() ? "localhost" : name;
    }

    /**
     * The name's UTF-8 bytes, cut at a character boundary to fit the record.
     */
    private static byte[] truncate(final String name)
    {
        String s = name;
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        while (bytes.length > HOST_MAX_BYTES)
        {
            s = s.substring(0, s.length() - 1);
            bytes = s.getBytes(StandardCharsets.UTF_8);
        }
        return bytes;
    }
}
