package dev.hccl.bench.check;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.ReduceOp;
import dev.hccl.tools.ToolCommand;

import java.util.List;

/**
 * Checks every collective of this build across the processes of a job: every operation, data type, reduction,
 * several counts, in place and out of place, against the reference. Start it with
 * {@code bin/hcclrun -np 4 bin/hccl-java dev.hccl.bench.check.SelfCheck}; it exits 1 when any result is wrong.
 */
public final class SelfCheck
{
    private SelfCheck()
    {
    }

    /**
     * Runs the check. A bad count, or a communicator that cannot be created, is said in one line on stderr (every
     * rank says it) and ends the process with {@link ToolCommand#USAGE} or 1.
     *
     * @param args optional counts (default 0 1 7 1000 100003).
     */
    public static void main(final String[] args)
    {
        final int[] counts;
        try
        {
            counts = counts(args);
        }
        catch (final IllegalArgumentException ex)
        {
            System.err.println("SelfCheck: " + ex.getMessage());
            System.exit(ToolCommand.USAGE);
            return;
        }
        final Communicator created;
        try
        {
            created = Hccl.init();
        }
        catch (final HcclException ex)
        {
            System.err.println("SelfCheck: cannot create the communicator: " + ex.getMessage());
            System.exit(1);
            return;
        }
        try (Communicator comm = created)
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

    /**
     * The element counts to check.
     *
     * @param args the command line: counts, or nothing for the default ones.
     * @return the counts.
     * @throws IllegalArgumentException naming an argument that is not a count.
     */
    static int[] counts(final String[] args)
    {
        if (args.length == 0)
        {
            return new int[]{0, 1, 7, 1000, 100_003};
        }
        final int[] counts = new int[args.length];
        for (int i = 0; i < args.length; i++)
        {
            try
            {
                counts[i] = Integer.parseInt(args[i]);
            }
            catch (final NumberFormatException ex)
            {
                counts[i] = -1;
            }
            if (counts[i] < 0)
            {
                throw new IllegalArgumentException("'" + args[i] + "' is not an element count; give counts >= 0, " +
                    "such as 0 1 7 1000, or none for the default ones");
            }
        }
        return counts;
    }
}
