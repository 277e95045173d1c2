package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;

import java.io.Serializable;
import java.util.TreeMap;

/**
 * A rank of {@link ObjectsProcessTest}: gathers each rank's {@link Report}, prints {@code GATHERED <list>}; takes rank
 * 1's configuration by broadcast, prints {@code CONFIG <map>}; then gathers a value of which rank 2's is a
 * {@link Banned}, which the job's {@code jdk.serialFilter} rejects, and prints {@code FAILED peer=<rank> <detail>}
 * (or {@code NOT-FAILED}); last, gathers bytes again and prints {@code DONE <lengths>}, as the ranks are still in step.
 */
public final class ObjectsWorker
{
    private ObjectsWorker()
    {
    }

    /** What a rank reports: its shard's file and a metric. */
    record Report(int rank, String file, double loss) implements Serializable
    {
    }

    /** The class the job's filter rejects. */
    record Banned(String what) implements Serializable
    {
    }

    /**
     * @param args none.
     */
    public static void main(final String[] args)
    {
        try (Communicator comm = Hccl.init())
        {
            final int r = comm.rank();
            System.out.println("GATHERED " + comm.allGatherObject(new Report(r, "part-" + r + ".parquet", r / 4.0),
                Report.class));
            final TreeMap<String, Object> config = new TreeMap<>();
            config.put("lr", 0.01);
            config.put("from", "rank 1");
            System.out.println("CONFIG " + comm.broadcastObject(r == 1 ? config : null, TreeMap.class, 1));
            try
            {
                final Object mine = r == 2 ? new Banned("secret") : "plain";
                System.out.println("NOT-FAILED " + comm.allGatherObject(mine, Object.class));
            }
            catch (final HcclException ex)
            {
                System.out.println("FAILED peer=" + ex.peer() + " " + ex.detail());
            }
            final byte[][] all = comm.allGatherBytes(new byte[r]);
            System.out.println("DONE " + all[0].length + "," + all[1].length + "," + all[2].length);
        }
        System.out.flush();
    }
}
