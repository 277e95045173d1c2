package dev.hccl.tools.launch;

import static dev.hccl.tools.launch.Launches.launch;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.hccl.tools.launch.Launches.Result;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Command-line parsing: usage errors, help and version. No rank is started by any of these. */
class HcclRunUsageTest
{
    static Stream<Arguments> usageErrors()
    {
        return Stream.of(
                usageError("give -np N (the ranks of a job on this machine) or --nproc-per-node P",
                        "sh", "-c", "true"),
                usageError("Missing required parameter: 'COMMAND'", "-np", "2"),
                usageError("Missing required parameter: 'COMMAND'"),
                usageError("--nnodes 2 needs --node-rank K, 0..1: each node's hcclrun has its own",
                        "--nnodes", "2", "--nproc-per-node", "2", "--master-addr", "10.0.0.1", "sh"),
                usageError("--node-rank must be in 0..1 for --nnodes 2, not 2", "--nnodes", "2", "--node-rank", "2",
                        "--nproc-per-node", "2", "--master-addr", "10.0.0.1", "sh"),
                usageError("--nproc-per-node must be given with --nnodes: the ranks this node starts",
                        "--nnodes", "2", "--node-rank", "1", "--master-addr", "10.0.0.1", "sh"),
                usageError("--master-addr must be given with --nnodes 2: node 0's address, which every node can "
                        + "reach", "--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "2", "sh"),
                usageError("-np 5 does not match --nnodes 2 x --nproc-per-node 2; give one or the other",
                        "-np", "5", "--nnodes", "2", "--node-rank", "0", "--nproc-per-node", "2",
                        "--master-addr", "10.0.0.1", "sh"),
                usageError("--nproc-per-node must be at least 1, not 0", "--nproc-per-node", "0", "sh"),
                usageError("--nnodes must be at least 1, not 0", "--nnodes", "0", "-np", "2", "sh"),
                usageError("--netns places the ranks of one hcclrun on simulated nodes; with --nnodes each node runs "
                        + "its own hcclrun (in its namespace: ip netns exec NODE hcclrun ...)", "--nnodes", "2",
                        "--node-rank", "0", "--nproc-per-node", "2", "--master-addr", "10.0.0.1", "--netns",
                        "hccl-node0", "sh"),
                usageError("--bind-to takes core, numa or none, not socket", "-np", "2", "--bind-to", "socket", "sh"),
                usageError("--max-restarts must be in 0..100, not -1", "-np", "2", "--max-restarts", "-1", "sh"),
                usageError("--token-file /nonexistent/token cannot be read: java.nio.file.NoSuchFileException: "
                        + "/nonexistent/token", "-np", "2", "--token-file", "/nonexistent/token", "sh"),
                usageError("-np must be at least 1, not 0", "-np", "0", "sh", "-c", "true"),
                usageError("-np must be at least 1, not -3", "-np", "-3", "sh", "-c", "true"),
                usageError("Invalid value for option '-np': 'two' is not an int", "-np", "two", "sh"),
                usageError("--master-port must be in 1..65535, not 70000",
                        "-np", "2", "--master-port", "70000", "sh"),
                usageError("--master-port must be in 1..65535, not 0", "-np", "2", "--master-port", "0", "sh"),
                usageError("--grace-period must be between 0 and 86400 seconds, not -1.0",
                        "-np", "2", "--grace-period", "-1", "sh"),
                usageError("--master-addr must not be empty", "-np", "2", "--master-addr", "", "sh"),
                usageError("Unknown option: '--bogus'", "-np", "2", "--bogus", "sh"),
                usageError("--netns lists 1 namespace(s) for 2 ranks; give one per rank, or PATTERN:K for K ranks "
                        + "per namespace", "-np", "2", "--netns", "hccl-node0", "sh"),
                usageError("--netns ranks per namespace must be at least 1, not 0",
                        "-np", "2", "--netns", "hccl-node%d:0", "sh"),
                // torchrun's spellings say the same as ours.
                usageError("--nnodes 2 needs --node-rank K, 0..1: each node's hcclrun has its own",
                        "--nnodes=2", "--nproc_per_node=2", "--master_addr=10.0.0.1", "sh"),
                usageError("--master-port must be in 1..65535, not 0", "--nproc_per_node", "2", "--master_port", "0",
                        "sh"),
                usageError("--standalone runs a job of one node, not --nnodes 2; for several nodes drop --standalone "
                        + "and give each node's hcclrun --node-rank and --master-addr",
                        "--standalone", "--nnodes", "2", "--node_rank", "0", "--nproc_per_node", "2", "sh"),
                usageError("--standalone rendezvouses on loopback on a free port, so --node-rank has no place beside "
                        + "it; drop one or the other", "--standalone", "--node_rank=0", "--nproc_per_node=2", "sh"),
                usageError("--standalone rendezvouses on loopback on a free port, so --master-addr has no place "
                        + "beside it; drop one or the other", "--standalone", "--master_addr", "10.0.0.1", "-np", "2",
                        "sh"),
                usageError("--standalone rendezvouses on loopback on a free port, so --master-port has no place "
                        + "beside it; drop one or the other", "--standalone", "--master-port=29500", "-np", "2",
                        "sh"),
                usageError("--standalone rendezvouses on loopback on a free port, so --netns has no place beside it; "
                        + "drop one or the other", "--standalone", "-np", "2", "--netns", "a,b", "sh"),
                usageError("--local-ranks-filter names local rank 2, but this hcclrun starts 2 rank(s), local ranks "
                        + "0..1", "-np", "2", "--local-ranks-filter", "0,2", "sh"),
                usageError("--local-ranks-filter names local rank 4, but this hcclrun starts 4 rank(s), local ranks "
                        + "0..3", "--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "4", "--master-addr",
                        "10.0.0.1", "--local_ranks_filter=1-4", "sh"),
                usageError("--local-ranks-filter takes local ranks and ranges of them, such as 0 or 0,2-3, not '0,x'",
                        "-np", "2", "--local-ranks-filter", "0,x", "sh"),
                usageError("--local-ranks-filter takes local ranks and ranges of them, such as 0 or 0,2-3, not ''",
                        "-np", "2", "--local-ranks-filter=", "sh"),
                usageError("--local-ranks-filter: the range 1-0 is empty; write it lowest first (0-1)",
                        "-np", "2", "--local-ranks-filter", "1-0", "sh"));
    }

    private static Arguments usageError(String message, String... args)
    {
        return Arguments.of(message, args);
    }

    /**
     * A usage error is its reason and one hint, not the whole usage, which would bury the reason (issue 41):
     * {@code hcclrun: REASON} then {@code Try 'hcclrun --help' ...}.
     */
    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("usageErrors")
    @Timeout(30)
    void usageErrorsExit2WithTheReasonAndOneHint(String message, String[] args)
    {
        Result r = launch(args);

        assertEquals(2, r.status(), r.err());
        assertEquals(List.of("hcclrun: " + message, "Try 'hcclrun --help' for more information."), r.errLines());
        assertFalse(r.err().contains("Usage:"), r.err());
        assertEquals("", r.out());
    }

    @Test
    @Timeout(30)
    void anUnknownOptionGetsPicocliGuessesOncePerOption()
    {
        Result r = launch("--nproc", "2", "sh");

        assertEquals(2, r.status(), r.err());
        assertEquals(List.of("hcclrun: Unknown option: '--nproc'",
                "Did you mean -np or --nproc-per-node? Try 'hcclrun --help' for more information."), r.errLines());
    }

    @Test
    @Timeout(30)
    void helpPrintsUsageAndExits0()
    {
        Result r = launch("--help");

        assertEquals(0, r.status());
        assertTrue(r.out().startsWith("Usage: hcclrun -np N [--master-addr ADDR] [--master-port PORT]"), r.out());
        assertTrue(r.out().contains("--grace-period=SECONDS"), r.out());
        assertEquals("", r.err());
    }

    @Test
    @Timeout(30)
    void aNamespaceWithoutAnAddressFailsBeforeAnyRankStarts()
    {
        // Whether ip is missing, the caller not root or the namespace absent, the lookup fails the same way.
        Result r = launch("-np", "2", "--netns", "hccl-no-such-namespace%d:1", "sh", "-c", "echo started");

        assertEquals(1, r.status(), r.err());
        assertTrue(r.err().startsWith("hcclrun: cannot find rank 0's address for MASTER_ADDR: "), r.err());
        assertTrue(r.err().contains("tools/netns-cluster.sh up"), r.err());
        assertEquals("", r.out());
    }

    @Test
    @Timeout(30)
    void versionPrintsTheProjectVersion()
    {
        Result r = launch("--version");

        assertEquals(0, r.status());
        assertEquals("hcclrun 0.1.0-SNAPSHOT", r.out().strip());
    }
}
