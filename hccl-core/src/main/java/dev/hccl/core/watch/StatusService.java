package dev.hccl.core.watch;

import dev.hccl.api.HcclException;
import dev.hccl.core.mailbox.LinkTraffic;
import dev.hccl.core.mailbox.Position;
import dev.hccl.core.op.PositionSurvey;
import org.json.JSONArray;
import org.json.JSONObject;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.function.Supplier;

/**
 * What rank 0 answers {@code hccl-status} with, as NCCL's RAS answers "where is every rank now" for a live job: after
 * a successful init, in a job with a token, rank 0 serves a store of its own on a free port of its rendezvous store's
 * host ({@code Rendezvous.serveStatus}; its INFO line at init gives the address), and a caller that proves the job key
 * (TLS too when the job uses it) asks it for this report. Each report surveys every rank of each communicator rank 0
 * is in (the job's, then those split or shrunk from it) as a stalled wait does ({@link PositionSurvey}): a question
 * over each link that the peer's transport answers, whatever its operations do, so that it works while the job hangs
 * and changes nothing in it.
 * <p>
 * The report (JSON, format {@value #FORMAT}): when rank 0 started and was asked; per rank of the job its node and
 * rank 0's link to it (transport, lost or not, how long the peer has been silent on it, bytes each way); per
 * communicator its ranks' answers and positions (idle after collective #k, running or waiting in an operation, for
 * whom and for how long; the last collectives issued and completed), the rank that holds the others up, judged as
 * that rank would (its "this rank") from the rank furthest ahead that waits in a collective, and its failure; rank
 * 0's own counters. Communicators rank 0 is not in are not seen.
 * It is closed with the links (the fabric's last release), which stops the store.
 */
public final class StatusService implements AutoCloseable
{
    /** The report's format, which a reader checks. */
    static final String FORMAT = "hccl-status/2";

    private final long startedMillis = System.currentTimeMillis();
    private volatile CommView root;
    private volatile Supplier<? extends List<? extends CommView>> children;
    private volatile AutoCloseable store;

    /**
     * Serves a root communicator's status from now on.
     *
     * @param comm     the root communicator, made and warmed up.
     * @param children the open communicators split or shrunk from it, in the order they were made.
     * @param stops    what stops rank 0's status store; null where there is none.
     */
    public void serve(
        final CommView comm, final Supplier<? extends List<? extends CommView>> children, final AutoCloseable stops)
    {
        this.store = stops;
        this.children = children;
        this.root = comm;
    }

    /**
     * @return the report as UTF-8 JSON, or null before the communicator is made.
     */
    public byte[] report()
    {
        final CommView comm = root;
        if (comm == null)
        {
            return null;
        }
        JSONObject report;
        try
        {
            report = report(comm, children.get(), startedMillis);
        }
        catch (final RuntimeException ex)
        {
            report = new JSONObject().put("format", FORMAT).put("worldSize", comm.worldSize())
                .put("error", "rank 0 could not survey the ranks: " + ex);
        }
        return report.toString(2).getBytes(StandardCharsets.UTF_8);
    }

    static JSONObject report(final CommView root, final List<? extends CommView> children, final long startedMillis)
    {
        final JSONArray communicators = new JSONArray().put(communicator(root));
        for (final CommView child : children)
        {
            communicators.put(communicator(child));
        }
        final var metrics = root.metrics();
        return new JSONObject()
            .put("format", FORMAT)
            .put("worldSize", root.worldSize())
            .put("startedAt", Instant.ofEpochMilli(startedMillis).toString())
            .put("askedAt", Instant.now().toString())
            .put("upSeconds", (System.currentTimeMillis() - startedMillis) / 1000)
            .put("ranks", links(root))
            .put("communicators", communicators)
            .put("rank0", new JSONObject().put("calls", metrics.calls()).put("bytes", metrics.bytes())
                .put("stalls", metrics.stalls()));
    }

    /** Each rank of the job, and rank 0's link to it. */
    private static JSONArray links(final CommView root)
    {
        final boolean[] lost = new boolean[root.worldSize()];
        for (final int r : root.lostRanks())
        {
            lost[r] = true;
        }
        final LinkTraffic traffic = root.traffic();
        final JSONArray ranks = new JSONArray();
        for (int r = 0; r < root.worldSize(); r++)
        {
            final JSONObject rank = new JSONObject().put("rank", r).put("node", root.scope().layout().nodeOf(r));
            if (r != root.rank())
            {
                rank.put("link", new JSONObject().put("transport", root.transportTo(r)).put("lost", lost[r])
                    .put("silentMillis", root.silentMillis(r)).put("bytesSent", traffic.sentTo(r))
                    .put("bytesReceived", traffic.receivedFrom(r)));
            }
            ranks.put(rank);
        }
        return ranks;
    }

    /** A communicator's ranks, where each is, and who holds the others up. */
    private static JSONObject communicator(final CommView comm)
    {
        final Position mine = comm.scope().whereabouts().now();
        final PositionSurvey.Finding asked = comm.scope().survey().run(mine, false);
        final Position[] got = asked.positions();
        final int viewpoint = furthestWaiting(got);
        final PositionSurvey.Finding finding = viewpoint < 0 || viewpoint == comm.rank() ? asked :
            PositionSurvey.judge(viewpoint, got);
        final JSONArray ranks = new JSONArray();
        for (int r = 0; r < got.length; r++)
        {
            final JSONObject rank = new JSONObject().put("rank", r).put("jobRank", comm.jobRanks()[r])
                .put("answered", got[r] != null);
            if (got[r] != null)
            {
                rank.put("position", position(got[r]));
            }
            ranks.put(rank);
        }
        final HcclException failure = comm.scope().failures().get();
        return new JSONObject()
            .put("communicator", Long.toHexString(comm.commId()))
            .put("size", got.length)
            .put("ranks", ranks)
            .put("behind", finding.culprit())
            .put("judgedFrom", viewpoint < 0 ? comm.rank() : viewpoint)
            .put("finding", finding.account())
            .put("failure", failure == null ? JSONObject.NULL : failure.getMessage());
    }

    private static JSONObject position(final Position p)
    {
        final JSONObject json = new JSONObject().put("seq", p.seq()).put("issued", p.issued())
            .put("completed", p.completed()).put("text", p.toString());
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
