package dev.hccl.tools.launch;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import dev.hccl.tools.ToolCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code hcclrun}: starts the ranks of an hccl-java job on this machine, the way {@code torchrun}
 * or {@code mpirun} do, and ties their lifetimes together.
 *
 * <p>Every rank gets torchrun's rendezvous variables ({@code MASTER_ADDR}, {@code MASTER_PORT},
 * {@code RANK}, {@code WORLD_SIZE}, {@code LOCAL_RANK}, {@code LOCAL_WORLD_SIZE}), a job token
 * ({@code HCCL_JOB_TOKEN}, and {@code HCCL_JOB_TOKEN_FILE} naming a file only the user can read that holds it,
 * {@link PrivateTokenFile} when the launcher made it) and {@code JDK_JAVA_OPTIONS} carrying the {@code --add-opens}
 * flag that Agrona needs and the other flags of {@link RankEnvironment}, for the launcher's own JDK (with
 * {@code HCCL_JDK_JAVA_OPTIONS_ADDED} naming what was appended, which the bin/ scripts take off again as they give the
 * flags on the command line). Output is forwarded line by line with a {@code [rank] } prefix. When a rank fails,
 * the others are stopped and the launcher exits with the failed rank's status.
 */
@Command(name = "hcclrun",
        mixinStandardHelpOptions = true,
        version = "hcclrun " + HcclRun.VERSION,
        sortOptions = false,
        usageHelpAutoWidth = true,
        customSynopsis = {"hcclrun -np N [--master-addr ADDR] [--master-port PORT] "
                + "[--grace-period SECONDS] [--no-prefix] [--netns SPEC] [--bind-to core|numa|none] "
                + "[--library-cores N] [--local-ranks-filter RANKS] "
                + "[--max-restarts R] [--] COMMAND [ARGS...]",
            "hcclrun --nnodes N --node-rank K --nproc-per-node P --master-addr ADDR [--master-port PORT] "
                + "[--token-file FILE] [--max-restarts R] [...] [--] COMMAND [ARGS...]",
            "hcclrun --standalone --nproc-per-node P [...] [--] COMMAND [ARGS...]"},
        description = {
            "Starts N local ranks of COMMAND (without a shell) with the environment of one hccl-java "
                    + "job: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, "
                    + "HCCL_JOB_TOKEN, OMP_NUM_THREADS (unless set: the node's cores / its ranks, at least 1, "
                    + "for libraries such as libtorch), and JDK_JAVA_OPTIONS with the flags hccl-java needs, "
                    + "which every JDK from 17 on accepts:",
            "  " + RankEnvironment.ADD_OPENS + " " + RankEnvironment.ADD_MODULES + " "
                    + RankEnvironment.ENABLE_NATIVE_ACCESS + " " + RankEnvironment.UNSAFE_MEMORY_ACCESS,
            "Output lines are prefixed with [rank]. When a rank exits non-zero, the others get SIGTERM "
                    + "and, after the grace period, SIGKILL; hcclrun exits with that rank's status, or, with "
                    + "--max-restarts, starts them all again (HCCL_RESTART_COUNT tells them which start it is).",
            "",
            "A job of several nodes, as torchrun's: run hcclrun once on each node with the same --nnodes, "
                    + "--nproc-per-node, --master-addr (node 0's address) and --master-port, each with its "
                    + "--node-rank; node K's ranks are K*P .. K*P+P-1. Every node's hcclrun must give its ranks "
                    + "the same token: HCCL_JOB_TOKEN in its environment, or --token-file.",
            "",
            "Without either, hcclrun makes the token and keeps it, while the job runs, in a file only you can read "
                    + "(in a directory of its own under $XDG_RUNTIME_DIR or the temporary directory), which the "
                    + "ranks get as HCCL_JOB_TOKEN_FILE (with --token-file, that file): rank 0's INFO line names it, "
                    + "'hccl-status --token-file FILE HOST:PORT'.",
            ""},
        footer = {
            "",
            "torchrun's spellings work too (--nproc_per_node, --node_rank, --master_addr, --master_port, "
                    + "--max_restarts, --local_ranks_filter), and so does OPTION=VALUE.",
            "",
            "Everything from COMMAND on is passed to the ranks unparsed. Rank 0 reads hcclrun's stdin; "
                    + "the other ranks read end-of-file.",
            "",
            "With --netns each rank runs as 'ip netns exec NAME COMMAND...' (root needed), LOCAL_RANK and "
                    + "LOCAL_WORLD_SIZE count the ranks of each namespace, and MASTER_ADDR defaults to the first "
                    + "global IPv4 address of rank 0's namespace. tools/netns-cluster.sh makes such namespaces: "
                    + "'hcclrun -np 4 --netns hccl-node%%d:2 ...' runs 2 nodes x 2 ranks.",
            "",
            "Example: hcclrun -np 4 bin/hccl-java dev.hccl.examples.AllReduceExample"})
public final class HcclRun implements Callable<Integer>
{
    /** The launcher's version, printed by {@code --version}. */
    public static final String VERSION = "0.1.0-SNAPSHOT";

    /** The rendezvous port of a job of several nodes when none is given, torchrun's. */
    static final int DEFAULT_MULTI_NODE_PORT = 29500;

    /** The most restarts one may ask for: a job that fails more often than this needs fixing, not restarting. */
    static final int MAX_RESTARTS = 100;

    @Spec
    private CommandSpec spec;

    @Option(names = {"-np", "-n"}, paramLabel = "N",
            description = "Number of ranks of the job (>= 1); on one node, those this hcclrun starts.")
    private Integer ranks;

    @Option(names = "--nnodes", paramLabel = "N", defaultValue = "1",
            description = "Nodes of the job, each running one hcclrun (default: ${DEFAULT-VALUE}).")
    private int nodes;

    @Option(names = {"--node-rank", "--node_rank"}, paramLabel = "K",
            description = "This node's number, 0 .. N-1 (required with --nnodes above 1; node 0 serves the "
                    + "rendezvous).")
    private Integer nodeRank;

    @Option(names = {"--nproc-per-node", "--nproc_per_node"}, paramLabel = "P",
            description = "Ranks this hcclrun starts on its node (the same on every node); alone, as -np.")
    private Integer perNode;

    @Option(names = "--standalone",
            description = "torchrun's single-node job: rank 0 serves the rendezvous on loopback, on a free port, "
                    + "as hcclrun does anyway without --nnodes; refuses the options of a job of several nodes.")
    private boolean standalone;

    @Option(names = "--token-file", paramLabel = "FILE",
            description = "Read the job token from FILE, which only you may read (chmod 600), instead of "
                    + "HCCL_JOB_TOKEN; never give a token on the command line, where ps shows it.")
    private Path tokenFile;

    @Option(names = "--bind-to", paramLabel = "core|numa|none", defaultValue = "none",
            description = "Bind each rank to a core of its own (with its hardware threads) or to a NUMA node, the "
                    + "ranks spread over the NUMA nodes first, round-robin beyond; as Open MPI's --bind-to, through "
                    + "taskset (default: ${DEFAULT-VALUE}: the launcher's affinity).")
    private String bindTo;

    @Option(names = "--library-cores", paramLabel = "N", defaultValue = "0",
            description = "With --bind-to: keep N cores (each NUMA node's last in turn) from the ranks for the "
                    + "library's own threads (I/O, heartbeat, streams), given to each rank as HCCL_LIBRARY_CPUS: "
                    + "those of its NUMA node where it has some (default: ${DEFAULT-VALUE}).")
    private int libraryCores;

    @Option(names = {"--max-restarts", "--max_restarts"}, paramLabel = "R", defaultValue = "0",
            description = "When a rank fails, stop this node's ranks and start them all again, at most R times "
                    + "(default: ${DEFAULT-VALUE}); every node's hcclrun restarts as its ranks fail with the job.")
    private int maxRestarts;

    @Option(names = {"--master-addr", "--master_addr"}, paramLabel = "ADDR",
            description = "Rendezvous address given to the ranks as MASTER_ADDR (default: "
                    + RankEnvironment.DEFAULT_MASTER_ADDR + ", or with --netns rank 0's namespace's address).")
    private String masterAddr;

    @Option(names = {"--master-port", "--master_port"}, paramLabel = "PORT",
            description = "Rendezvous port given to the ranks as MASTER_PORT (default: a free port on ADDR; "
                    + "with --nnodes, " + DEFAULT_MULTI_NODE_PORT + ").")
    private Integer masterPort;

    @Option(names = "--grace-period", paramLabel = "SECONDS", defaultValue = "5",
            description = "How long stopped ranks may take to exit after SIGTERM before they, and the "
                    + "processes they started, get SIGKILL (default: ${DEFAULT-VALUE}).")
    private double gracePeriodSeconds;

    @Option(names = "--no-prefix", description = "Do not prefix output lines with [rank].")
    private boolean noPrefix;

    @Option(names = {"--local-ranks-filter", "--local_ranks_filter"}, paramLabel = "RANKS",
            description = "Print the output of these ranks of this hcclrun only (0-based as they start, as LOCAL_RANK "
                    + "without --netns): 0 or 0,2-3, as torchrun's. The others' stdout and stderr are not printed, "
                    + "except, when one of them fails, the last " + HiddenOutput.MAX_LINES + " lines of each.")
    private String localRanksFilter;

    @Option(names = "--netns", paramLabel = "SPEC",
            description = "Run each rank in a network namespace: NAME[,NAME...] one per rank, or PATTERN:K "
                    + "for K consecutive ranks per namespace, PATTERN's %%d being the namespace's number "
                    + "(hccl-node%%d:2: ranks 0-1 in hccl-node0, 2-3 in hccl-node1, ...).")
    private String netns;

    @Parameters(paramLabel = "COMMAND", arity = "1..*",
            description = "The program each rank runs, and its arguments.")
    private List<String> command;

    private final PrintStream out;
    private final PrintStream err;
    /** What each rank starts for COMMAND: the tools jar turns the name of one of its tools into a java command. */
    private final UnaryOperator<List<String>> rankCommand;

    private HcclRun(PrintStream out, PrintStream err, UnaryOperator<List<String>> rankCommand)
    {
        this.out = out;
        this.err = err;
        this.rankCommand = rankCommand;
    }

    /**
     * Runs the launcher and exits the JVM with its status.
     *
     * @param args the command line
     */
    public static void main(String[] args)
    {
        main(args, UnaryOperator.identity());
    }

    /**
     * Runs the launcher and exits the JVM with its status, each rank starting what {@code rankCommand} makes of
     * COMMAND.
     *
     * @param args        the command line
     * @param rankCommand turns COMMAND and its arguments into what each rank starts
     */
    public static void main(String[] args, UnaryOperator<List<String>> rankCommand)
    {
        System.exit(run(args, System.out, System.err, rankCommand));
    }

    /**
     * Runs the launcher in this JVM, for {@link #main} and for tests or tools that embed it.
     *
     * @param args the command line
     * @param out  receives the ranks' stdout and {@code --help}/{@code --version}
     * @param err  receives the ranks' stderr, the launcher's messages and usage errors
     * @return 0 when all ranks exited 0; the first failed rank's status (128 + signal when it was
     *         killed by a signal); 2 on a usage error; 127 when a rank could not be started
     */
    public static int run(String[] args, PrintStream out, PrintStream err)
    {
        return run(args, out, err, UnaryOperator.identity());
    }

    /**
     * Runs the launcher in this JVM as {@link #run(String[], PrintStream, PrintStream)} does, each rank starting what
     * {@code rankCommand} makes of COMMAND.
     *
     * @param args        the command line
     * @param out         receives the ranks' stdout and {@code --help}/{@code --version}
     * @param err         receives the ranks' stderr, the launcher's messages and usage errors
     * @param rankCommand turns COMMAND and its arguments into what each rank starts
     * @return as {@link #run(String[], PrintStream, PrintStream)}
     */
    public static int run(String[] args, PrintStream out, PrintStream err, UnaryOperator<List<String>> rankCommand)
    {
        CommandLine cl = new CommandLine(new HcclRun(out, err, rankCommand))
                // Everything from the first positional on belongs to COMMAND, so that
                // "hcclrun -np 2 java -cp x Main --flag" needs no "--".
                .setStopAtPositional(true)
                .setParameterExceptionHandler(ToolCommand.usageErrors("hcclrun"))
                .setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true));
        int status = cl.execute(args);
        out.flush();
        err.flush();
        return status;
    }

    /**
     * Validates the options and runs the job; picocli calls this after parsing.
     *
     * @return the exit status
     */
    @Override
    public Integer call()
    {
        checkStandalone();
        final int local = localRanks();
        if (masterAddr != null && masterAddr.isBlank())
        {
            throw usage("--master-addr must not be empty");
        }
        if (masterPort != null && (masterPort < 1 || masterPort > 65535))
        {
            throw usage("--master-port must be in 1..65535, not " + masterPort);
        }
        if (!(gracePeriodSeconds >= 0) || gracePeriodSeconds > Duration.ofDays(1).toSeconds())
        {
            throw usage("--grace-period must be between 0 and 86400 seconds, not " + gracePeriodSeconds);
        }
        if (maxRestarts < 0 || maxRestarts > MAX_RESTARTS)
        {
            throw usage("--max-restarts must be in 0.." + MAX_RESTARTS + ", not " + maxRestarts);
        }
        final Set<Integer> hidden = localRanksFilter == null ? Set.of()
                : parsed(() -> RankFilter.hidden(localRanksFilter, local));
        final JobTokens.Token token = parsed(() -> JobTokens.resolve(System.getenv(), tokenFile, nodes > 1));
        Duration grace = Duration.ofNanos(Math.round(gracePeriodSeconds * 1e9));
        final List<String> namespaces = netns == null ? List.of() : parsed(() -> NetnsPlacement.parse(netns, local));
        String addr = masterAddr;
        if (addr == null)
        {
            try
            {
                // Rank 0's loopback cannot be reached from the other namespaces; its node's address can.
                addr = namespaces.isEmpty() ? RankEnvironment.DEFAULT_MASTER_ADDR
                        : NetnsPlacement.addressOf(namespaces.get(0));
            }
            catch (final IOException e)
            {
                err.println("hcclrun: cannot find rank 0's address for MASTER_ADDR: " + e.getMessage()
                        + " (is the cluster up? tools/netns-cluster.sh up --nodes N; or give --master-addr)");
                err.flush();
                return 1;
            }
        }
        final CpuPlacement.Plan placement;
        try
        {
            placement = CpuPlacement.onThisMachine(bindTo, local, libraryCores);
        }
        catch (final IllegalArgumentException e)
        {
            throw usage(e.getMessage());
        }
        catch (final IOException e)
        {
            err.println("hcclrun: --bind-to " + bindTo + ": " + e.getMessage() + " (binding needs Linux's /sys and "
                    + "taskset; use --bind-to none)");
            err.flush();
            return 1;
        }
        final int node = nodeRank == null ? 0 : nodeRank;
        // Launchers of several nodes must agree on the port: none picks a free one of its own.
        final Integer port = nodes > 1 && masterPort == null ? Integer.valueOf(DEFAULT_MULTI_NODE_PORT) : masterPort;
        LaunchPlan plan = new LaunchPlan(rankCommand.apply(command), local, local * nodes, node * local, addr, port,
                grace, !noPrefix, namespaces, maxRestarts, placement == null ? List.of() : placement.rankCpus(),
                placement == null ? List.of() : placement.libraryCpus(), hidden);
        // A token the launcher made is kept in a private file for hccl-status, whose path the ranks get.
        try (PrivateTokenFile kept = token.made() ? PrivateTokenFile.keepOrSay(token.value(), System.getenv(), err)
                : null)
        {
            return new LocalJob(plan, out, err, token.value(), kept != null ? kept.file() : token.file()).run();
        }
    }

    /** {@code --standalone} is a job of this node alone, rendezvousing on loopback: nothing may say otherwise. */
    private void checkStandalone()
    {
        if (!standalone)
        {
            return;
        }
        if (nodes != 1)
        {
            throw usage("--standalone runs a job of one node, not --nnodes " + nodes + "; for several nodes drop "
                    + "--standalone and give each node's hcclrun --node-rank and --master-addr");
        }
        final String given = nodeRank != null ? "--node-rank" : masterAddr != null ? "--master-addr"
                : masterPort != null ? "--master-port" : netns != null ? "--netns" : null;
        if (given != null)
        {
            throw usage("--standalone rendezvouses on loopback on a free port, so " + given + " has no place "
                    + "beside it; drop one or the other");
        }
    }

    /** The ranks this hcclrun starts, from -np, --nnodes and --nproc-per-node, which must agree. */
    private int localRanks()
    {
        if (nodes < 1)
        {
            throw usage("--nnodes must be at least 1, not " + nodes);
        }
        if (nodes > 1 || nodeRank != null)
        {
            if (nodeRank == null)
            {
                throw usage("--nnodes " + nodes + " needs --node-rank K, 0.." + (nodes - 1)
                        + ": each node's hcclrun has its own");
            }
            if (nodeRank < 0 || nodeRank >= nodes)
            {
                throw usage("--node-rank must be in 0.." + (nodes - 1) + " for --nnodes " + nodes + ", not "
                        + nodeRank);
            }
            if (perNode == null)
            {
                throw usage("--nproc-per-node must be given with --nnodes: the ranks this node starts");
            }
            if (masterAddr == null && nodes > 1)
            {
                throw usage("--master-addr must be given with --nnodes " + nodes + ": node 0's address, which "
                        + "every node can reach");
            }
            if (netns != null)
            {
                throw usage("--netns places the ranks of one hcclrun on simulated nodes; with --nnodes each node "
                        + "runs its own hcclrun (in its namespace: ip netns exec NODE hcclrun ...)");
            }
        }
        final int local = perNode != null ? perNode : ranks == null ? 0 : ranks;
        if (perNode == null && ranks == null)
        {
            throw usage("give -np N (the ranks of a job on this machine) or --nproc-per-node P");
        }
        if (local < 1)
        {
            throw usage((perNode != null ? "--nproc-per-node" : "-np") + " must be at least 1, not " + local);
        }
        if (ranks != null && ranks != (long)local * nodes)
        {
            throw usage("-np " + ranks + " does not match --nnodes " + nodes + " x --nproc-per-node " + local
                    + "; give one or the other");
        }
        return local;
    }

    /** What {@code parse} makes of an option, its {@link IllegalArgumentException} a usage error. */
    private <T> T parsed(final Supplier<T> parse)
    {
        try
        {
            return parse.get();
        }
        catch (final IllegalArgumentException e)
        {
            throw usage(e.getMessage());
        }
    }

    private ParameterException usage(String message)
    {
        return new ParameterException(spec.commandLine(), message);
    }
}
