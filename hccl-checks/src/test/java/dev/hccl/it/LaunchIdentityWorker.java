package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.bench.check.SelfCheck;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    /**
     * Checks what rank {@code r} of a single-node job of {@code ranks} printed: numbered right, every check passed.
     *
     * @param out      the rank's output.
     * @param r        the rank.
     * @param ranks    the world size.
     * @param launcher what the launcher printed, for the message.
     */
    static void assertNumberedAndPassed(final String out, final int r, final int ranks, final String launcher)
    {
        assertTrue(out.contains("IDENTITY rank=" + r + " size=" + ranks + " local=" + r + "/" + ranks + "\n"),
            "rank " + r + " numbered wrongly or missing:\n" + out + "\nlauncher:\n" + launcher);
        final String summary = "rank " + r + " of " + ranks + ": ";
        assertTrue(out.lines().anyMatch(l -> l.startsWith(summary) && l.endsWith(" passed, 0 failed")),
            "no passing SelfCheck from rank " + r + ":\n" + out);
        assertFalse(out.contains("WRONG"), out);
    }
}
