package dev.hccl.tools.trace;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Reads the flight recorders of every rank of a communicator ({@code hccl-trace-<comm>-r<rank>.json}) and says in one
 * paragraph what went wrong: the rank that never issued a collective the others did, the ranks that issued different
 * operations at one sequence number, the operations still running, the failure, and the slowest rank.
 */
final class TraceAnalysis
{
    /** One operation of one rank's dump. */
    record Op(String lane, int peer, long seq, String operation, String dataType, String reduceOp, int root,
        long count, String algorithm, String fingerprint, String state, long startedMicros, String error)
    {
        String describe()
        {
            final StringBuilder s = new StringBuilder(operation).append('(');
            s.append("count=").append(count);
            if (dataType != null)
            {
                s.append(", ").append(dataType);
            }
            if (reduceOp != null)
            {
                s.append(", ").append(reduceOp);
            }
            if (root >= 0)
            {
                s.append(", root=").append(root);
            }
            return s.append(')').toString();
        }
    }

    /**
     * A rank's failure.
     *
     * @param message what the rank's exception says.
     * @param relayed whether it passed a peer's own failure on, so that the peer's is the root cause (unknown, and
     *                false, in a dump of format 1).
     */
    record Failure(String message, boolean relayed)
    {
    }

    /** One rank's dump. */
    record Dump(String commId, int rank, int worldSize, int[] jobRanks, String host, String reason, Failure failure,
        List<Op> ops)
    {
        List<Op> collectives()
        {
            return ops.stream().filter(o -> "collective".equals(o.lane())).toList();
        }
    }

    private TraceAnalysis()
    {
    }

    /**
     * Reads one dump.
     *
     * @param file the JSON file.
     * @return its content.
     * @throws IOException when it cannot be read or is not a dump.
     */
    static Dump read(final Path file) throws IOException
    {
        final JsonNode root = new ObjectMapper().readTree(file.toFile());
        final String format = root == null ? null : root.path("format").asText();
        if (!"hccl-trace/1".equals(format) && !"hccl-trace/2".equals(format))
        {
            throw new IOException(file + " is not an hccl-trace dump (format hccl-trace/1 or /2)");
        }
        final List<Op> ops = new ArrayList<>();
        for (final JsonNode e : root.path("entries"))
        {
            ops.add(new Op(e.path("lane").asText(), e.path("peer").asInt(), e.path("seq").asLong(),
                e.path("operation").asText(), text(e, "dataType"), text(e, "reduceOp"), e.path("root").asInt(-1),
                e.path("count").asLong(), text(e, "algorithm"), e.path("fingerprint").asText(), e.path("state").asText(),
                e.path("startedMicros").asLong(-1), text(e, "error")));
        }
        final JsonNode jobRanks = root.get("jobRanks");
        return new Dump(root.path("commId").asText(), root.path("rank").asInt(), root.path("worldSize").asInt(),
            jobRanks == null || !jobRanks.isArray() ? null :
                java.util.stream.StreamSupport.stream(jobRanks.spliterator(), false).mapToInt(JsonNode::asInt).toArray(),
            root.path("host").asText(), root.path("reason").asText(), failure(root.get("failure")), ops);
    }

    /** A dump's failure: an object from format 2, its message alone from format 1, or null. */
    private static Failure failure(final JsonNode node)
    {
        if (node == null || node.isNull())
        {
            return null;
        }
        return node.isObject() ? new Failure(text(node, "message"), node.path("relayed").asBoolean()) :
            new Failure(node.asText(), false);
    }

    private static String text(final JsonNode node, final String field)
    {
        final JsonNode v = node.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }

    /**
     * Explains one communicator's dumps.
     *
     * @param dumps every rank's dump of one communicator, at most one per rank.
     * @return the paragraph.
     */
    static String explain(final List<Dump> dumps)
    {
        final List<Dump> byRank = dumps.stream().sorted(Comparator.comparingInt(Dump::rank)).toList();
        final int worldSize = byRank.get(0).worldSize();
        final StringBuilder out = new StringBuilder("Communicator ").append(byRank.get(0).commId()).append(": dumps of ")
            .append(byRank.size() == worldSize ? "all " + worldSize + " ranks" :
                "ranks " + ranks(byRank) + " of " + worldSize + " (none from " + missing(byRank, worldSize) +
                ": dead, or HCCL_DUMP_DIR not shared)").append('.');
        neverIssued(byRank, out);
        different(byRank, out);
        stillRunning(byRank, out);
        failure(byRank, out);
        slowest(byRank, out);
        jobRanks(byRank, out);
        return out.toString();
    }

    /**
     * Which job ranks the ranks named above are, for a communicator split or shrunk from the job's (dumps of format
     * 2 from this version on say it): its rank 1 may be the job's rank 3, and that is the process to look at.
     */
    private static void jobRanks(final List<Dump> dumps, final StringBuilder out)
    {
        final int[] job = dumps.stream().map(Dump::jobRanks).filter(j -> j != null).findFirst().orElse(null);
        if (job == null || java.util.stream.IntStream.range(0, job.length).allMatch(r -> job[r] == r))
        {
            return;
        }
        out.append(" Its ranks are the job's ranks ").append(java.util.stream.IntStream.range(0, job.length)
            .mapToObj(r -> r + "=" + job[r]).collect(Collectors.joining(", "))).append('.');
    }

    /** The rank that issued fewest collectives, when the others went further. */
    private static void neverIssued(final List<Dump> dumps, final StringBuilder out)
    {
        final Map<Integer, Long> last = new TreeMap<>();
        for (final Dump d : dumps)
        {
            last.put(d.rank(), d.collectives().stream().mapToLong(Op::seq).max().orElse(-1));
        }
        final long highest = last.values().stream().mapToLong(Long::longValue).max().orElse(-1);
        final long lowest = last.values().stream().mapToLong(Long::longValue).min().orElse(-1);
        if (highest == lowest)
        {
            return;
        }
        final List<Integer> behind = last.entrySet().stream().filter(e -> e.getValue() == lowest)
            .map(Map.Entry::getKey).toList();
        final List<Integer> ahead = last.entrySet().stream().filter(e -> e.getValue() > lowest)
            .map(Map.Entry::getKey).toList();
        final long missingSeq = lowest + 1;
        final Op next = dumps.stream().filter(d -> ahead.contains(d.rank())).flatMap(d -> d.collectives().stream())
            .filter(o -> o.seq() == missingSeq).findFirst().orElse(null);
        out.append(' ').append(behind.size() == 1 ? "Rank " + behind.get(0) : "Ranks " + behind)
            .append(" never issued collective #").append(missingSeq)
            .append(next == null ? "" : " (" + next.describe() + ")").append(", which ")
            .append(ahead.size() == 1 ? "rank " + ahead.get(0) : "ranks " + ahead).append(" issued");
        final Dump first = dumps.stream().filter(d -> d.rank() == behind.get(0)).findFirst().orElseThrow();
        final Op lastOp = first.collectives().stream().max(Comparator.comparingLong(Op::seq)).orElse(null);
        out.append(lastOp == null ? "; it issued none." : "; its last was #" + lastOp.seq() + " (" +
            lastOp.describe() + ", " + lastOp.state() + ").");
    }

    /** The first sequence number at which ranks issued different collectives. */
    private static void different(final List<Dump> dumps, final StringBuilder out)
    {
        final TreeMap<Long, Map<String, List<Integer>>> bySeq = new TreeMap<>();
        final Map<String, String> described = new LinkedHashMap<>();
        for (final Dump d : dumps)
        {
            for (final Op o : d.collectives())
            {
                bySeq.computeIfAbsent(o.seq(), s -> new LinkedHashMap<>())
                    .computeIfAbsent(o.fingerprint(), f -> new ArrayList<>()).add(d.rank());
                described.putIfAbsent(o.fingerprint(), o.describe());
            }
        }
        for (final Map.Entry<Long, Map<String, List<Integer>>> e : bySeq.entrySet())
        {
            if (e.getValue().size() > 1)
            {
                out.append(" At collective #").append(e.getKey()).append(" the ranks issued different operations: ")
                    .append(e.getValue().entrySet().stream().map(f -> (f.getValue().size() == 1 ? "rank " +
                        f.getValue().get(0) : "ranks " + f.getValue()) + " " + described.get(f.getKey()))
                        .collect(Collectors.joining(", "))).append('.');
                return;
            }
        }
    }

    /** Operations that had not completed when the ranks dumped. */
    private static void stillRunning(final List<Dump> dumps, final StringBuilder out)
    {
        final List<String> running = new ArrayList<>();
        for (final Dump d : dumps)
        {
            for (final Op o : d.ops())
            {
                if ("started".equals(o.state()) || "issued".equals(o.state()))
                {
                    running.add("rank " + d.rank() + " in " + ("collective".equals(o.lane()) ? "" : o.lane() +
                        ("send".equals(o.lane()) ? " to " : " from ") + "rank " + o.peer() + " ") + "#" + o.seq() +
                        " " + o.describe() + " (" + o.state() + ")");
                    break; // its oldest: the one the rest wait behind
                }
            }
        }
        if (!running.isEmpty())
        {
            out.append(" Still running when dumped: ").append(String.join("; ", running)).append('.');
        }
    }

    /** The failure the ranks report, the root cause first. */
    private static void failure(final List<Dump> dumps, final StringBuilder out)
    {
        dumps.stream().filter(d -> d.failure() != null)
            .min(Comparator.comparingInt(d -> d.failure().relayed() ? 1 : 0))
            .map(d -> " Rank " + d.rank() + " failed: " + d.failure().message())
            .ifPresent(said -> out.append(said).append(said.endsWith(".") ? "" : "."));
    }

    /** The rank that started last most often among the collectives every rank completed. */
    private static void slowest(final List<Dump> dumps, final StringBuilder out)
    {
        final TreeSet<Long> common = new TreeSet<>();
        boolean first = true;
        for (final Dump d : dumps)
        {
            final TreeSet<Long> done = d.collectives().stream().filter(o -> "completed".equals(o.state()) &&
                o.startedMicros() >= 0).map(Op::seq).collect(Collectors.toCollection(TreeSet::new));
            if (first)
            {
                common.addAll(done);
                first = false;
            }
            else
            {
                common.retainAll(done);
            }
        }
        if (common.isEmpty() || dumps.size() < 2)
        {
            return;
        }
        final Map<Integer, Integer> lastCount = new TreeMap<>();
        final Map<Integer, Long> lagSum = new TreeMap<>();
        for (final long seq : common)
        {
            long earliest = Long.MAX_VALUE;
            long latest = Long.MIN_VALUE;
            int latestRank = -1;
            for (final Dump d : dumps)
            {
                final long t = d.collectives().stream().filter(o -> o.seq() == seq).findFirst().orElseThrow()
                    .startedMicros();
                earliest = Math.min(earliest, t);
                if (t > latest)
                {
                    latest = t;
                    latestRank = d.rank();
                }
            }
            lastCount.merge(latestRank, 1, Integer::sum);
            lagSum.merge(latestRank, latest - earliest, Long::sum);
        }
        final Map.Entry<Integer, Integer> top = lastCount.entrySet().stream()
            .max(Map.Entry.comparingByValue()).orElseThrow();
        out.append(" Slowest: rank ").append(top.getKey()).append(" started last in ").append(top.getValue())
            .append(" of the ").append(common.size()).append(" collectives every rank completed, on average ")
            .append(String.format("%.2f", lagSum.get(top.getKey()) / 1000.0 / top.getValue()))
            .append(" ms after the first (clocks of different hosts may differ).");
    }

    private static List<Integer> ranks(final List<Dump> dumps)
    {
        return dumps.stream().map(Dump::rank).toList();
    }

    private static List<Integer> missing(final List<Dump> dumps, final int worldSize)
    {
        final List<Integer> present = ranks(dumps);
        final List<Integer> missing = new ArrayList<>();
        for (int r = 0; r < worldSize; r++)
        {
            if (!present.contains(r))
            {
                missing.add(r);
            }
        }
        return missing;
    }
}
