package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.tools.check.SelfCheck;

/**
 * A rank started by a foreign launcher: prints how the library numbered it ({@code IDENTITY rank=R size=N local=L/S}),
 * then runs {@link SelfCheck} with the given counts, which prints its summary and exits 1 on a wrong result.
 */
public final class LaunchIdentityWorker
{
    private LaunchIdentityWorker()
    {
    }

    public static void main(final String[] args)
    {
        try (Communicator comm = Hccl.init())
        {
            System.out.println("IDENTITY rank=" + comm.rank() + " size=" + comm.worldSize() + " local=" +
                comm.localRank() + "/" + comm.localSize());
        }
        SelfCheck.main(args);
    }
}
