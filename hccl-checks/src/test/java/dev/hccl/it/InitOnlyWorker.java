package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;

/**
 * Joins the job from the launcher's variables and prints {@code OK}; a failed init leaves {@code main} with the
 * exception, as a user's program that does not catch it.
 */
public final class InitOnlyWorker
{
    private InitOnlyWorker()
    {
    }

    /**
     * @param args none.
     */
    public static void main(final String[] args)
    {
        try (Communicator comm = Hccl.init())
        {
            System.out.println("OK rank " + comm.rank());
        }
    }
}
