package dev.hccl.core.op;

import dev.hccl.api.Operation;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.WaitPolicy;
import dev.hccl.core.mailbox.Position;
import dev.hccl.core.mailbox.PositionDesk;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * When a wait lasts too long, asks every peer of the communicator where it is (operation, sequence number, whom it
 * waits for) and names the rank that holds the others up: one that does not answer (frozen, or its link is down),
 * else one behind (it has not reached the operation this rank waits in), else the end of the chain of ranks waiting
 * for each other. So a timeout names the rank at fault, not the neighbour that waits for it.
 */
public final class PositionSurvey
{
    /** How long peers have to answer: their transports answer, whatever their operations do. */
    static final long ANSWER_NANOS = TimeUnit.SECONDS.toNanos(2);

    /**
     * What the survey found.
     *
     * @param culprit   the rank that holds the others up, in the communicator, or -1 when none stands out.
     * @param account   the positions and the finding, in words.
     * @param positions each rank's position, null for a rank that did not answer.
     */
    public record Finding(int culprit, String account, Position[] positions)
    {
    }

    private final int rank;
    private final int worldSize;
    private final Whereabouts whereabouts;
    private final ProgressEngine engine;
    private final WaitPolicy waitPolicy;
    private final RankNumbering numbering;
    private final PositionDesk desk;

    /**
     * A communicator's survey.
     *
     * @param rank        this rank.
     * @param whereabouts where this rank waits; one survey at a time holds it.
     * @param engine      what drives the transports while the caller waits for the answers, or null.
     * @param waitPolicy  how the caller waits.
     * @param numbering   the communicator's ranks in the root communicator and back.
     * @param desk        where the questions go out and the answers come in.
     */
    public PositionSurvey(
        final int rank, final Whereabouts whereabouts, final ProgressEngine engine, final WaitPolicy waitPolicy,
        final RankNumbering numbering, final PositionDesk desk)
    {
        this.rank = rank;
        this.worldSize = numbering.size();
        this.whereabouts = whereabouts;
        this.engine = engine;
        this.waitPolicy = waitPolicy;
        this.numbering = numbering;
        this.desk = desk;
    }

    /**
     * Asks every peer, and waits up to {@link #ANSWER_NANOS} for the answers.
     *
     * @param mine    where this rank is.
     * @param driving true when the caller is the thread that drives the transports (it must go on driving).
     * @return the finding.
     */
    public Finding run(final Position mine, final boolean driving)
    {
        final int n = worldSize;
        final int me = rank;
        final Position[] got = new Position[n];
        final Request[] answered = new Request[n];
        synchronized (whereabouts) // one survey at a time per communicator
        {
            for (int r = 0; r < n; r++)
            {
                answered[r] = new Request(r, false, 0);
            }
            desk.surveyWith((global, position) ->
            {
                final int r = numbering.rankOf(global);
                if (r >= 0 && got[r] == null)
                {
                    got[r] = position;
                    answered[r].complete();
                }
            });
            try
            {
                for (int r = 0; r < n; r++)
                {
                    if (r != me)
                    {
                        desk.ask(numbering.global(r));
                    }
                }
                final long deadline = System.nanoTime() + ANSWER_NANOS;
                for (int r = 0; r < n; r++)
                {
                    if (r != me)
                    {
                        if (driving && engine != null)
                        {
                            answered[r].await(deadline, engine, waitPolicy);
                        }
                        else
                        {
                            answered[r].await(deadline);
                        }
                    }
                }
            }
            finally
            {
                desk.surveyWith(null);
            }
        }
        synchronized (got)
        {
            got[me] = mine;
            return judge(me, got);
        }
    }

    /**
     * Names the rank at fault from everyone's position.
     *
     * @param me  this rank.
     * @param got each rank's position, null for those that did not answer.
     * @return the finding.
     */
    public static Finding judge(final int me, final Position[] got)
    {
        final StringBuilder all = new StringBuilder();
        final List<Integer> silent = new ArrayList<>();
        for (int r = 0; r < got.length; r++)
        {
            all.append(all.length() == 0 ? "" : "; ").append("rank ").append(r).append(r == me ? " (this rank)" : "")
                .append(": ").append(got[r] == null ? "no answer" : got[r].toString());
            if (got[r] == null)
            {
                silent.add(r);
            }
        }
        final String positions = " Positions: " + all + ".";
        if (!silent.isEmpty())
        {
            return new Finding(silent.get(0), (silent.size() == 1 ? "rank " + silent.get(0) + " did not" :
                "ranks " + silent + " did not") + " answer within " + ANSWER_NANOS / 1_000_000_000 +
                " s: frozen (stopped, in a debugger, swapping), or unreachable." + positions, got);
        }
        // Behind: a rank that has not reached the collective this rank waits in.
        final Position mine = got[me];
        if (mine.desc() != null && isCollective(mine))
        {
            // Progress in half steps: idle after #k is 2k, inside #k is 2k - 1; this rank is inside #S.
            int behind = -1;
            long lowest = 2 * mine.seq() - 1;
            for (int r = 0; r < got.length; r++)
            {
                final Position p = got[r];
                if (r == me || !(p.idle() || isCollective(p)))
                {
                    continue;
                }
                final long progress = p.idle() ? 2 * p.seq() : 2 * p.seq() - 1;
                if (progress < lowest)
                {
                    behind = r;
                    lowest = progress;
                }
            }
            if (behind >= 0)
            {
                return new Finding(behind, "rank " + behind + " is behind: " + got[behind] + ", while this rank " +
                    "waits in collective #" + mine.seq() + " (it has not issued it, or is stuck in an earlier one)." +
                    positions, got);
            }
        }
        // The end of the chain of waits that starts with this rank.
        int r = mine.waitingFor();
        final boolean[] seen = new boolean[got.length];
        seen[me] = true;
        while (r >= 0 && !seen[r] && got[r].waitingFor() >= 0)
        {
            seen[r] = true;
            r = got[r].waitingFor();
        }
        if (r < 0)
        {
            return new Finding(-1, "no rank stands out from the positions." + positions, got);
        }
        if (seen[r])
        {
            return new Finding(-1, "the ranks wait for each other in a cycle: they issued operations that do not " +
                "match (different orders of sends and receives, say)." + positions, got);
        }
        return new Finding(r, "rank " + r + " holds the others up: " + got[r] + "." + positions, got);
    }

    private static boolean isCollective(final Position p)
    {
        return p.desc() != null && p.desc().operation() != Operation.SEND && p.desc().operation() != Operation.RECV;
    }
}
