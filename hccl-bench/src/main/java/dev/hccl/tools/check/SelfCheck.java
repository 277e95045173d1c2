package dev.hccl.tools.check;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;

import java.util.List;

/**
 * Checks every collective of this build across the processes of a job: every operation, data type, reduction,
 * several counts, in place and out of place, against the reference. Start it with
 * {@code bin/hcclrun -np 4 bin/hccl-java dev.hccl.tools.check.SelfCheck}; it exits 1 when any result is wrong.
 */
public final class SelfCheck
{
    private SelfCheck()
    {
    }

    /**
     * Runs the check.
     *
     * @param args optional counts (default 0 1 7 1000 1000003).
     */
    public static void main(final String[] args)
    {
        final int[] counts = args.length == 0 ? new int[]{0, 1, 7, 1000, 100_003} :
            java.util.Arrays.stream(args).mapToInt(Integer::parseInt).toArray();
        try (Communicator comm = Hccl.init())
        {
            final List<CheckCase> cases = CollectiveCheck.matrix(comm.worldSize(), counts, DataType.values(),
                ReduceOp.values());
            int wrong = 0;
            long seed = 1;
            final long start = System.nanoTime();
            for (final CheckCase c : cases)
            {
                final String error = CollectiveCheck.run(comm, c, seed++);
                if (error != null)
                {
                    wrong++;
                    System.out.println("WRONG " + error);
                }
            }
            comm.barrier();
            System.out.printf("rank %d of %d: %d collectives over %s checked in %.1f s: %d passed, %d failed%n",
                comm.rank(), comm.worldSize(), cases.size(), comm.transports(), (System.nanoTime() - start) / 1e9, cases.size() - wrong, wrong);
            if (wrong > 0)
            {
                System.exit(1);
            }
        }
    }
}
