package dev.hccl.tools.status;

import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.TlsMaterial;
import dev.hccl.tools.TokenFile;
import dev.hccl.tools.ToolCommand;
import dev.hccl.tools.launch.HcclRun;
import org.json.JSONArray;
import org.json.JSONObject;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import javax.net.ssl.SSLContext;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code hccl-status}: where every rank of a running job is, asked of rank 0, which serves it on a port of its own
 * when the job has a token ({@code HCCL_JOB_TOKEN}; rank 0's INFO line at init gives the address, and the file that
 * holds the token when there is one, {@code HCCL_JOB_TOKEN_FILE}). The caller proves the token, from
 * {@code --token-file} or {@code HCCL_JOB_TOKEN}, as a rank does, over TLS when {@code HCCL_TLS_*} are set as the
 * ranks have them; rank 0 surveys every rank over the job's own links and answers (docs/ARCHITECTURE.md, "Failure
 * model"). It changes nothing in the job.
 * <p>
 * Exit status: 0; 1 when the store cannot be reached, refuses the token, or has no status yet; 2 on a usage error.
 */
@Command(name = "hccl-status",
    mixinStandardHelpOptions = true,
    version = "hccl-status " + HcclRun.VERSION,
    usageHelpAutoWidth = true,
    description = {
        "Asks a running job where each of its ranks is, in each communicator rank 0 is in: whether it answers, the "
            + "operation it runs or waits in, for whom and for how long, the last collectives it issued and "
            + "completed, and which rank holds the others up; and for each rank, rank 0's link to it: up or lost, "
            + "how long the rank has been silent on it, the bytes moved each way. Needs "
            + "the job's token, from --token-file FILE (the file rank 0's INFO line names: where hcclrun keeps the "
            + "token it made, or its own --token-file) or from HCCL_JOB_TOKEN, as every rank has it; and "
            + "HCCL_TLS_CERT, HCCL_TLS_KEY and HCCL_TLS_CA when the job uses TLS.",
        ""},
    footer = {"", "Exit status: 0 OK; 1 no answer (unreachable, token refused, no status yet); 2 a usage error.", "",
        "Examples: bin/hccl-status --token-file /run/user/1000/hcclrun-123/token 127.0.0.1:40123",
        "          HCCL_JOB_TOKEN=... bin/hccl-status node0:40123"})
public final class HcclStatus implements Callable<Integer>
{
    /** The report's format this command reads; {@code --json} prints any. */
    static final String FORMAT = "hccl-status/2";

    @Parameters(index = "0", paramLabel = "HOST:PORT",
        description = "Where rank 0 serves the status: its INFO line at init says (\"hccl-status HOST:PORT\").")
    private String address;

    @Option(names = "--json", description = "Print rank 0's report as it came, JSON (format " + FORMAT + ").")
    private boolean json;

    @Option(names = "--token-file", paramLabel = "FILE",
        description = "Read the job's token from FILE, which must be yours and open to no one else (chmod 600), "
            + "instead of HCCL_JOB_TOKEN: the file rank 0's INFO line names.")
    private Path tokenFile;

    @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "10",
        description = "How long to try to reach the store (default: ${DEFAULT-VALUE}).")
    private int timeoutSeconds;

    @Spec
    private CommandSpec spec;

    private PrintWriter out;
    private PrintWriter err;
    private Map<String, String> env;

    /**
     * @param args the command line.
     */
    public static void main(final String[] args)
    {
        System.exit(run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), System.getenv(), args));
    }

    /**
     * Runs the command.
     *
     * @param out  where the report goes.
     * @param err  where errors go.
     * @param env  the environment: {@code HCCL_JOB_TOKEN} and the TLS settings.
     * @param args the command line.
     * @return the exit status.
     */
    public static int run(final PrintWriter out, final PrintWriter err, final Map<String, String> env,
        final String... args)
    {
        final HcclStatus command = new HcclStatus();
        command.out = out;
        command.err = err;
        command.env = env;
        return new CommandLine(command).setOut(out).setErr(err)
            .setParameterExceptionHandler(ToolCommand.usageErrors("hccl-status")).execute(args);
    }

    @Override
    public Integer call()
    {
        final int colon = address.lastIndexOf(':');
        final int port;
        try
        {
            port = Integer.parseInt(address.substring(colon + 1));
        }
        catch (final NumberFormatException | IndexOutOfBoundsException ex)
        {
            throw usage("give HOST:PORT as rank 0's INFO line at init says (\"hccl-status HOST:PORT\"), not "
                + address);
        }
        final String token = token();
        final Optional<String> report;
        try
        {
            report = Hccl.jobStatus(new InetSocketAddress(address.substring(0, colon), port), token, tls(),
                Duration.ofSeconds(timeoutSeconds));
        }
        catch (final HcclException ex)
        {
            err.println("hccl-status: " + ex.getMessage());
            return 1;
        }
        if (report.isEmpty())
        {
            err.println("hccl-status: rank 0 at " + address + " has no status: its communicator is not made yet");
            return 1;
        }
        out.println(json ? report.get() : describe(new JSONObject(report.get())));
        return 0;
    }

    /** The job's token: from {@code --token-file}, checked as hcclrun checks its own, or from the environment. */
    private String token()
    {
        if (tokenFile != null)
        {
            try
            {
                return TokenFile.read(tokenFile);
            }
            catch (final IllegalArgumentException ex)
            {
                throw usage(ex.getMessage());
            }
        }
        final String token = env.get("HCCL_JOB_TOKEN");
        if (token == null || token.isEmpty())
        {
            throw usage("give the job's token: --token-file FILE, the file rank 0's INFO line names, or "
                + "HCCL_JOB_TOKEN, as every rank has it (a job without a token serves no status)");
        }
        return token;
    }

    private CommandLine.ParameterException usage(final String message)
    {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }

    private SSLContext tls()
    {
        final String cert = env.get("HCCL_TLS_CERT");
        final String key = env.get("HCCL_TLS_KEY");
        final String ca = env.get("HCCL_TLS_CA");
        if (cert == null && key == null && ca == null)
        {
            return null;
        }
        if (cert == null || key == null || ca == null)
        {
            throw usage("HCCL_TLS_CERT, HCCL_TLS_KEY and HCCL_TLS_CA go together");
        }
        return TlsMaterial.load(Path.of(cert), Path.of(key), Path.of(ca)).sslContext();
    }

    /**
     * The report in words: a line for the job, one per rank with rank 0's link to it, then per communicator one line
     * per rank and the finding.
     *
     * @param report rank 0's report.
     * @return the text.
     */
    static String describe(final JSONObject report)
    {
        final StringBuilder sb = new StringBuilder();
        if (!FORMAT.equals(report.optString("format")))
        {
            return sb.append("hccl-status: rank 0 answered in format ").append(report.optString("format"))
                .append(", which this hccl-status does not read (it reads ").append(FORMAT)
                .append("); --json prints it as it came").toString();
        }
        sb.append(String.format(Locale.ROOT, "Job of %d ranks; rank 0 up since %s (%d s); asked %s%n",
            report.getInt("worldSize"), report.optString("startedAt"), report.optLong("upSeconds"),
            report.optString("askedAt")));
        if (report.has("error"))
        {
            return sb.append(report.getString("error")).toString();
        }
        sb.append(String.format(Locale.ROOT, "%5s %5s  %-22s %8s %10s %10s%n", "rank", "node", "link from rank 0",
            "silent", "sent", "received"));
        final JSONArray ranks = report.getJSONArray("ranks");
        for (int i = 0; i < ranks.length(); i++)
        {
            final JSONObject r = ranks.getJSONObject(i);
            final JSONObject link = r.optJSONObject("link");
            sb.append(String.format(Locale.ROOT, "%5d %5d  ", r.getInt("rank"), r.getInt("node")));
            if (link == null)
            {
                sb.append(String.format(Locale.ROOT, "%-22s %8s %10s %10s%n", "(rank 0 itself)", "-", "-", "-"));
                continue;
            }
            final long silent = link.getLong("silentMillis");
            sb.append(String.format(Locale.ROOT, "%-22s %8s %10s %10s%n",
                link.getString("transport") + (link.getBoolean("lost") ? ", LOST" : ", up"),
                silent < 0 ? "?" : String.format(Locale.ROOT, "%.1f s", silent / 1e3),
                bytes(link.getLong("bytesSent")), bytes(link.getLong("bytesReceived"))));
        }
        final JSONArray communicators = report.getJSONArray("communicators");
        for (int c = 0; c < communicators.length(); c++)
        {
            communicator(sb, communicators.getJSONObject(c), c == 0);
        }
        return sb.toString().stripTrailing();
    }

    private static void communicator(final StringBuilder sb, final JSONObject comm, final boolean root)
    {
        final JSONArray ranks = comm.getJSONArray("ranks");
        final StringBuilder jobRanks = new StringBuilder();
        for (int i = 0; i < ranks.length(); i++)
        {
            jobRanks.append(i == 0 ? "" : ", ").append(ranks.getJSONObject(i).getInt("jobRank"));
        }
        sb.append(String.format(Locale.ROOT, "%nCommunicator %s, %s, %d ranks%s:%n", comm.getString("communicator"),
            root ? "the job's" : "split or shrunk from it", comm.getInt("size"),
            root ? "" : " (job ranks " + jobRanks + ")"));
        sb.append(String.format(Locale.ROOT, "%5s %5s  %-8s %7s %9s  %s%n", "rank", "job", "answered", "issued",
            "completed", "position"));
        for (int i = 0; i < ranks.length(); i++)
        {
            final JSONObject r = ranks.getJSONObject(i);
            final JSONObject p = r.optJSONObject("position");
            sb.append(String.format(Locale.ROOT, "%5d %5d  %-8s %7s %9s  %s%n", r.getInt("rank"), r.getInt("jobRank"),
                p == null ? "NO" : "yes", p == null ? "" : sequence(p.getLong("issued")),
                p == null ? "" : sequence(p.getLong("completed")),
                p == null ? "no answer within 2 s: frozen or unreachable" : p.getString("text")));
        }
        final int behind = comm.getInt("behind");
        sb.append(behind < 0 ? "No rank holds the others up" : "Rank " + behind + " holds the others up")
            .append(" (as rank ").append(comm.getInt("judgedFrom")).append(" sees it): ")
            .append(comm.getString("finding")).append(System.lineSeparator());
        if (!comm.isNull("failure"))
        {
            sb.append("The communicator failed: ").append(comm.getString("failure")).append(System.lineSeparator());
        }
    }

    private static String sequence(final long seq)
    {
        return seq < 0 ? "-" : "#" + seq;
    }

    /** Bytes with a binary prefix, as {@code 1.5 MiB}. */
    static String bytes(final long bytes)
    {
        if (bytes < 1024)
        {
            return bytes + " B";
        }
        final int unit = (63 - Long.numberOfLeadingZeros(bytes)) / 10;
        return String.format(Locale.ROOT, "%.1f %siB", bytes / Math.pow(1024, unit), "KMGTPE".charAt(unit - 1));
    }
}
