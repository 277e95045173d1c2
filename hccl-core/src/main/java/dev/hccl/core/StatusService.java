package dev.hccl.core;

import dev.hccl.api.HcclException;
import dev.hccl.core.mailbox.Position;
import org.json.JSONArray;
import org.json.JSONObject;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * What rank 0 answers {@code hccl-status} with, as NCCL's RAS answers "where is every rank now" for a live job: after
 * a successful init, in a job with a token, rank 0 serves a store of its own on a free port of its rendezvous store's
 * host ({@code Rendezvous.serveStatus}; its INFO line at init gives the address), and a caller that proves the job key
 * (TLS too when the job uses it) asks it for this report. Each report surveys every rank of the root
 * communicator as a stalled wait does ({@link PositionSurvey}): a question over each link that the peer's transport
 * answers, whatever its operations do, so that it works while the job hangs and changes nothing in it.
 * <p>
 * The report (JSON): the communicator, its size, when it was asked; per rank whether it answered within
 * {@link PositionSurvey#ANSWER_NANOS}, whether rank 0 lost its link to it, its node and its position (idle after
 * collective #k, running or waiting in an operation, for whom and for how long); the rank that holds the others up,
 * judged as that rank would (its "this rank") from the rank furthest ahead that waits in a collective; the
 * communicator's failure; rank 0's own counters.
 * It is closed with the links ({@link Fabric}'s last release), which stops the store.
 */
final class StatusService implements AutoCloseable
{
    private final long startedMillis = System.currentTimeMillis();
    private volatile CommunicatorImpl root;
    private volatile AutoCloseable store;

    /**
     * Serves a root communicator's status from now on.
     *
     * @param comm  the root communicator, made and warmed up.
     * @param stops what stops rank 0's status store; null where there is none.
     */
    void serve(final CommunicatorImpl comm, final AutoCloseable stops)
    {
        this.store = stops;
        this.root = comm;
    }

    /**
     * @return the report as UTF-8 JSON, or null before the communicator is made.
     */
    byte[] report()
    {
        final CommunicatorImpl comm = root;
        if (comm == null)
        {
            return null;
        }
        JSONObject report;
        try
        {
            report = report(comm, startedMillis);
        }
        catch (final RuntimeException ex)
        {
            report = new JSONObject().put("format", "hccl-status/1").put("communicator",
                Long.toHexString(comm.commId())).put("error", "rank 0 could not survey the ranks: " + ex);
        }
        return report.toString(2).getBytes(StandardCharsets.UTF_8);
    }

    static JSONObject report(final CommunicatorImpl comm, final long startedMillis)
    {
        final Position mine = comm.whereabouts().now();
        final PositionSurvey.Finding asked = comm.survey(mine, false);
        final Position[] got = asked.positions();
        final int viewpoint = furthestWaiting(got);
        final PositionSurvey.Finding finding = viewpoint < 0 || viewpoint == comm.rank() ? asked :
            PositionSurvey.judge(viewpoint, got);
        final boolean[] lost = new boolean[got.length];
        for (final int r : comm.lostRanks())
        {
            lost[r] = true;
        }
        final JSONArray ranks = new JSONArray();
        for (int r = 0; r < got.length; r++)
        {
            final JSONObject rank = new JSONObject().put("rank", r).put("node", comm.layout().nodeOf(r))
                .put("answered", got[r] != null).put("linkLost", lost[r]);
            if (got[r] != null)
            {
                rank.put("position", position(got[r]));
            }
            ranks.put(rank);
        }
        final HcclException failure = comm.failures().get();
        final JSONObject report = new JSONObject()
            .put("format", "hccl-status/1")
            .put("communicator", Long.toHexString(comm.commId()))
            .put("worldSize", got.length)
            .put("askedAt", Instant.now().toString())
            .put("upSeconds", (System.currentTimeMillis() - startedMillis) / 1000)
            .put("ranks", ranks)
            .put("behind", finding.culprit())
            .put("judgedFrom", viewpoint < 0 ? comm.rank() : viewpoint)
            .put("finding", finding.account())
            .put("failure", failure == null ? JSONObject.NULL : failure.getMessage());
        final var metrics = comm.metrics();
        report.put("rank0", new JSONObject().put("calls", metrics.calls()).put("bytes", metrics.bytes())
            .put("stalls", metrics.stalls()));
        return report;
    }

    private static JSONObject position(final Position p)
    {
        final JSONObject json = new JSONObject().put("seq", p.seq()).put("text", p.toString());
        if (p.idle())
        {
            return json.put("state", "idle");
        }
        return json.put("state", p.waitingFor() < 0 ? "running" : "waiting").put("operation", p.desc().toString())
            .put("waitingFor", p.waitingFor()).put("waitedMillis", p.waitedMillis());
    }

    /** The rank that waits in the latest collective, when every rank answered; else -1. */
    private static int furthestWaiting(final Position[] got)
    {
        int furthest = -1;
        for (int r = 0; r < got.length; r++)
        {
            if (got[r] == null)
            {
                return -1;
            }
            if (!got[r].idle() && got[r].waitingFor() >= 0 && (furthest < 0 || got[r].seq() > got[furthest].seq()))
            {
                furthest = r;
            }
        }
        return furthest;
    }

    @Override
    public void close() throws Exception
    {
        final AutoCloseable s = store;
        if (s != null)
        {
            s.close();
        }
    }
}
