package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Joins the job, prints {@code READY}, and stays up, idle, until the file named by its argument exists; then all ranks
 * meet at a barrier and exit 0. A job that a test can ask about for as long as it likes, and then end cleanly.
 */
public final class UntilFileWorker
{
    private UntilFileWorker()
    {
    }

    /**
     * @param args the file whose appearance ends the job.
     * @throws InterruptedException when interrupted while waiting.
     */
    public static void main(final String[] args) throws InterruptedException
    {
        final Path stop = Path.of(args[0]);
        try (Communicator comm = Hccl.init())
        {
            System.out.println("READY rank " + comm.rank());
            System.out.flush();
            while (!Files.exists(stop))
            {
                Thread.sleep(50);
            }
            comm.barrier();
        }
    }
}
