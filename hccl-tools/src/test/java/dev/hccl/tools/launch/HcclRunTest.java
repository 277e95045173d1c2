package dev.hccl.tools.launch;

import static dev.hccl.tools.launch.Launches.launch;
import static dev.hccl.tools.launch.Launches.pid;
import static dev.hccl.tools.launch.Launches.running;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.hccl.tools.launch.Launches.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Launches real {@code sh} ranks in-process through {@link HcclRun#run}. */
class HcclRunTest
{
    @TempDir
    Path dir;

    @Test
    @Timeout(30)
    void forwardsStdoutAndStderrWithRankPrefixes()
    {
        Result r = launch("-np", "3", "--", "sh", "-c", "echo hello $RANK of $WORLD_SIZE; echo err $RANK >&2");

        assertEquals(0, r.status(), r.err());
        assertEquals(List.of("[0] hello 0 of 3", "[1] hello 1 of 3", "[2] hello 2 of 3"), r.sortedOutLines());
        assertEquals(List.of("[0] err 0", "[1] err 1", "[2] err 2"), r.sortedErrLines());
    }

    @Test
    @Timeout(30)
    void noPrefixForwardsLinesUnchanged()
    {
        Result r = launch("-np", "2", "--no-prefix", "sh", "-c", "echo hello $RANK; echo oops $RANK >&2");

        assertEquals(0, r.status(), r.err());
        assertEquals(List.of("hello 0", "hello 1"), r.sortedOutLines());
        assertEquals(List.of("oops 0", "oops 1"), r.sortedErrLines());
    }

    @Test
    @Timeout(30)
    void givesEveryRankTheJobEnvironment()
    {
        int n = 4;
        Result r = launch("-np", Integer.toString(n), "sh", "-c",
                "echo \"env $RANK|$LOCAL_RANK|$WORLD_SIZE|$LOCAL_WORLD_SIZE|$MASTER_ADDR|$MASTER_PORT"
                        + "|$HCCL_JOB_TOKEN|$JDK_JAVA_OPTIONS\"");

        assertEquals(0, r.status(), r.err());
        Pattern line = Pattern.compile("\\[(\\d+)] env (.*)");
        Set<String> addrs = new HashSet<>();
        Set<String> ports = new HashSet<>();
        Set<String> tokens = new HashSet<>();
        Set<Integer> ranks = new HashSet<>();
        assertEquals(n, r.outLines().size(), r.out());
        for (String l : r.outLines())
        {
            Matcher m = line.matcher(l);
            assertTrue(m.matches(), l);
            String[] v = m.group(2).split("\\|", -1);
            assertEquals(8, v.length, l);
            int prefixRank = Integer.parseInt(m.group(1));
            assertEquals(Integer.toString(prefixRank), v[0], "RANK matches the prefix: " + l);
            assertEquals(v[0], v[1], "LOCAL_RANK == RANK on one node: " + l);
            assertEquals(Integer.toString(n), v[2], "WORLD_SIZE: " + l);
            assertEquals(Integer.toString(n), v[3], "LOCAL_WORLD_SIZE: " + l);
            ranks.add(Integer.parseInt(v[0]));
            addrs.add(v[4]);
            ports.add(v[5]);
            tokens.add(v[6]);
            assertTrue(v[7].contains("--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED"), l);
        }
        assertEquals(Set.of(0, 1, 2, 3), ranks);
        assertEquals(Set.of("127.0.0.1"), addrs);
        assertEquals(1, ports.size(), ports.toString());
        assertTrue(Integer.parseInt(ports.iterator().next()) > 0, ports.toString());
        assertEquals(1, tokens.size(), tokens.toString());
        String token = tokens.iterator().next();
        String inherited = System.getenv("HCCL_JOB_TOKEN");
        if (inherited != null && !inherited.isBlank())
        {
            assertEquals(inherited, token);
        }
        else
        {
            assertTrue(token.matches("[0-9a-f]{32}"), token);
        }
    }

    /**
     * The token hcclrun made is in a file only the user can read, which every rank gets as HCCL_JOB_TOKEN_FILE, for
     * rank 0's INFO line to name to hccl-status; once the launcher is done, it and its directory are gone.
     */
    @Test
    @Timeout(30)
    void theTokenItMadeIsKeptInAPrivateFileForTheJobsLife()
    {
        assumeTrue(System.getenv("HCCL_JOB_TOKEN") == null, "hcclrun makes a token only when it is given none");
        Result r = launch("-np", "2", "--no-prefix", "sh", "-c",
                "f=$HCCL_JOB_TOKEN_FILE; "
                        + "echo \"$f|$(cat \"$f\")|$HCCL_JOB_TOKEN|$(stat -c %a \"$f\")|$(stat -c %a \"${f%/*}\")\"");

        assertEquals(0, r.status(), r.err());
        assertEquals(2, r.outLines().size(), r.out());
        assertEquals(1, r.outLines().stream().distinct().count(), "one file for the job: " + r.out());
        String[] v = r.outLines().get(0).split("\\|", -1);
        assertTrue(v[0].startsWith("/") && v[0].endsWith("/" + PrivateTokenFile.NAME), r.out());
        assertEquals(v[2], v[1], "the file holds the ranks' token: " + r.out());
        assertTrue(v[1].matches("[0-9a-f]{32}"), r.out());
        assertEquals("600", v[3], r.out());
        assertEquals("700", v[4], r.out());
        assertFalse(Files.exists(Path.of(v[0])), "the token file outlived the launcher");
        assertFalse(Files.exists(Path.of(v[0]).getParent()), "its directory outlived the launcher");
    }

    /** A token from --token-file: the ranks get that file's path, and the launcher leaves it where it is. */
    @Test
    @Timeout(30)
    void aGivenTokenFileIsTheOneTheRanksAreTold() throws Exception
    {
        Path file = Files.writeString(dir.resolve("token"), "s3cret-of-16-chars\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        Result r = launch("-np", "1", "--no-prefix", "--token-file", file.toString(), "sh", "-c",
                "echo \"$HCCL_JOB_TOKEN_FILE|$HCCL_JOB_TOKEN\"");

        assertEquals(0, r.status(), r.err());
        assertEquals(List.of(file.toAbsolutePath() + "|s3cret-of-16-chars"), r.outLines());
        assertTrue(Files.exists(file));
    }

    @Test
    @Timeout(30)
    void explicitMasterAddressAndPortAreUsed()
    {
        Result r = launch("-n", "2", "--master-addr", "localhost", "--master-port", "29555", "--no-prefix",
                "sh", "-c", "echo $MASTER_ADDR:$MASTER_PORT");

        assertEquals(0, r.status(), r.err());
        assertEquals(List.of("localhost:29555", "localhost:29555"), r.outLines());
    }

    /** torchrun's spellings, with their values after '=' or as the next argument, mean what ours do. */
    @Test
    @Timeout(30)
    void torchrunsSpellingsAreAccepted()
    {
        Result one = launch("--nproc_per_node", "2", "sh", "-c", "echo $RANK/$WORLD_SIZE $MASTER_ADDR");
        assertEquals(0, one.status(), one.err());
        assertEquals(List.of("[0] 0/2 127.0.0.1", "[1] 1/2 127.0.0.1"), one.sortedOutLines());

        Result node = launch("--nnodes=1", "--node_rank=0", "--nproc_per_node=2", "--master_addr=localhost",
                "--master_port=29557", "--max_restarts=0", "--no-prefix", "sh", "-c",
                "echo $RANK $LOCAL_RANK $MASTER_ADDR:$MASTER_PORT");
        assertEquals(0, node.status(), node.err());
        assertEquals(List.of("0 0 localhost:29557", "1 1 localhost:29557"), node.sortedOutLines());
    }

    /** torchrun --standalone: one node, rendezvous on loopback on a free port; what hcclrun does anyway. */
    @Test
    @Timeout(30)
    void standaloneIsOneNodeOnLoopback()
    {
        Result r = launch("--standalone", "--nproc-per-node=2", "--no-prefix", "sh", "-c",
                "echo $WORLD_SIZE $MASTER_ADDR $MASTER_PORT");

        assertEquals(0, r.status(), r.err());
        assertEquals(2, r.outLines().size(), r.out());
        assertEquals(1, r.outLines().stream().distinct().count(), r.out());
        String[] v = r.outLines().get(0).split(" ");
        assertEquals("2", v[0]);
        assertEquals("127.0.0.1", v[1]);
        assertTrue(Integer.parseInt(v[2]) > 0, r.out());
    }

    /** --local-ranks-filter, as torchrun's: the named ranks' stdout and stderr are printed, the others' not. */
    @Test
    @Timeout(30)
    void theFilterPrintsTheNamedRanksOutputOnly()
    {
        Result r = launch("-np", "4", "--local_ranks_filter=0,2-3", "sh", "-c", "echo out $RANK; echo err $RANK >&2");

        assertEquals(0, r.status(), r.err());
        assertEquals(List.of("[0] out 0", "[2] out 2", "[3] out 3"), r.sortedOutLines());
        assertEquals(List.of("[0] err 0", "[2] err 2", "[3] err 3"), r.sortedErrLines());
    }

    /**
     * A rank whose output the filter hides fails: the launcher prints the last lines it wrote to each stream, so that
     * the reason is not lost, and then its verdict; a chatty stdout does not push the reason off stderr.
     */
    @Test
    @Timeout(30)
    void aFailingHiddenRanksLastLinesArePrinted()
    {
        Result r = launch("-np", "2", "--local-ranks-filter", "0", "--grace-period", "1", "sh", "-c",
                "if [ $RANK = 1 ]; then i=1; while [ $i -le 30 ]; do echo line $i; i=$((i+1)); done; "
                        + "echo the reason >&2; exit 3; fi; exec sleep 20");

        assertEquals(3, r.status(), r.err());
        assertEquals("", r.out());
        List<String> expected = new ArrayList<>();
        expected.add("hcclrun: the last lines rank 1 wrote to stdout, hidden by --local-ranks-filter (20 of 30):");
        for (int i = 11; i <= 30; i++)
        {
            expected.add("[1] line " + i);
        }
        expected.add("hcclrun: the last lines rank 1 wrote to stderr, hidden by --local-ranks-filter (1 of 1):");
        expected.add("[1] the reason");
        expected.add("hcclrun: rank 1 exited with status 3; stopping the other ranks");
        assertEquals(expected, r.errLines());
    }

    @Test
    @Timeout(30)
    void argumentsAfterTheCommandBelongToTheCommand()
    {
        Result r = launch("-np", "1", "sh", "-c", "echo \"$@\"", "sh", "-np", "7", "--no-prefix", "--help");

        assertEquals(0, r.status(), r.err());
        assertEquals(List.of("[0] -np 7 --no-prefix --help"), r.outLines());
    }

    @Test
    @Timeout(30)
    void terminatesAnUnfinishedLastLine()
    {
        Result r = launch("-np", "2", "sh", "-c", "printf 'partial %s' $RANK");

        assertEquals(0, r.status(), r.err());
        assertEquals("", r.err());
        assertEquals(List.of("[0] partial 0", "[1] partial 1"), r.sortedOutLines());
        assertTrue(r.out().endsWith("\n"), r.out());
    }

    @Test
    @Timeout(60)
    void linesOfDifferentRanksNeverInterleave()
    {
        int n = 4;
        int lines = 2000;
        Result r = launch("-np", Integer.toString(n), "sh", "-c",
                "pad=$(printf '%0300d' 0 | tr 0 x); i=0; while [ $i -lt " + lines + " ]; do "
                        + "echo \"rank $RANK line $i $pad\"; i=$((i+1)); done");

        assertEquals(0, r.status(), r.err());
        Pattern line = Pattern.compile("\\[(\\d)] rank (\\d) line (\\d+) x{300}");
        Map<Integer, List<Integer>> seen = new HashMap<>();
        for (String l : r.outLines())
        {
            Matcher m = line.matcher(l);
            assertTrue(m.matches(), () -> "mangled line: " + l.substring(0, Math.min(l.length(), 120)));
            assertEquals(m.group(1), m.group(2), l);
            seen.computeIfAbsent(Integer.parseInt(m.group(1)), k -> new ArrayList<>())
                    .add(Integer.parseInt(m.group(3)));
        }
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < lines; i++)
        {
            expected.add(i);
        }
        for (int rank = 0; rank < n; rank++)
        {
            assertEquals(expected, seen.get(rank), "rank " + rank + " lines, complete and in order");
        }
    }

    @Test
    @Timeout(30)
    void aFailingRankStopsTheOthersAndItsStatusIsReturned() throws Exception
    {
        // Rank 1 fails only after the others have recorded their PIDs, so the test knows whom to check.
        String script = "echo $$ > " + dir + "/pid.$RANK; "
                + "if [ $RANK = 1 ]; then "
                + "  while [ ! -s " + dir + "/pid.0 ] || [ ! -s " + dir + "/pid.2 ]; do sleep 0.02; done; "
                + "  sleep 0.1; echo failing because; echo reasons >&2; exit 3; "
                + "fi; exec sleep 60";

        Result r = launch("-np", "3", "sh", "-c", script);

        assertEquals(3, r.status(), r.err());
        // The failed rank's last words come before the launcher's verdict.
        assertEquals(List.of("[1] reasons", "hcclrun: rank 1 exited with status 3; stopping the other ranks"),
                r.errLines());
        assertEquals(List.of("[1] failing because"), r.outLines());
        // SIGTERM suffices for sleep: the launcher must not have waited for the 5 s grace period.
        assertTrue(r.elapsed().compareTo(Duration.ofSeconds(5)) < 0, r.elapsed().toString());
        assertFalse(running(pid(dir.resolve("pid.0"))), "rank 0 still running");
        assertFalse(running(pid(dir.resolve("pid.2"))), "rank 2 still running");
    }

    @Test
    @Timeout(30)
    void whenTheRestartsAreSpentTheLastLineSaysSo()
    {
        Result r = launch("-np", "2", "--max-restarts", "2", "sh", "-c",
                "if [ $RANK = 1 ]; then exit 3; fi; exec sleep 20");

        assertEquals(3, r.status(), r.err());
        final List<String> lines = r.errLines();
        assertTrue(lines.contains("hcclrun: restarting the ranks of this node (2 of 2 restarts)"), r.err());
        assertEquals("hcclrun: the ranks of this node failed after every restart (2 of 2, --max-restarts); giving up "
                + "with status 3", lines.get(lines.size() - 1), r.err());
    }

    @Test
    @Timeout(30)
    void aRankIgnoringSigtermAndItsChildrenAreKilledAfterTheGracePeriod() throws Exception
    {
        // Rank 0 ignores SIGTERM, and so does the sleep it starts (ignored signals are inherited).
        String script = "if [ $RANK = 0 ]; then "
                + "  trap '' TERM; sleep 60 & echo $! > " + dir + "/child.0; echo $$ > " + dir + "/pid.0; wait; "
                + "  echo unexpected; exit 0; "
                + "fi; "
                + "while [ ! -s " + dir + "/pid.0 ]; do sleep 0.02; done; exit 3";

        Result r = launch("-np", "2", "--grace-period", "1", "sh", "-c", script);

        assertEquals(3, r.status(), r.err());
        assertTrue(r.errLines().contains("hcclrun: rank 1 exited with status 3; stopping the other ranks"), r.err());
        assertFalse(r.out().contains("unexpected"), r.out());
        assertTrue(r.elapsed().compareTo(Duration.ofMillis(1000)) >= 0, "grace period honoured: " + r.elapsed());
        assertTrue(r.elapsed().compareTo(Duration.ofSeconds(6)) < 0, r.elapsed().toString());
        assertFalse(running(pid(dir.resolve("pid.0"))), "rank 0 survived SIGKILL?");
        assertFalse(running(pid(dir.resolve("child.0"))), "rank 0's child survived");
    }

    @Test
    @Timeout(30)
    void stoppedRanksCanStillSayGoodbye() throws Exception
    {
        // The output a rank writes in its SIGTERM handler must reach the launcher's stdout.
        String script = "if [ $RANK = 0 ]; then "
                + "  trap 'echo goodbye $RANK; exit 5' TERM; echo $$ > " + dir + "/pid.0; sleep 60 & wait; "
                + "fi; "
                + "while [ ! -s " + dir + "/pid.0 ]; do sleep 0.02; done; exit 4";

        Result r = launch("-np", "2", "sh", "-c", script);

        assertEquals(4, r.status(), r.err());
        assertEquals(List.of("[0] goodbye 0"), r.outLines());
        assertEquals(List.of("hcclrun: rank 1 exited with status 4; stopping the other ranks"), r.errLines());
    }

    @Test
    @Timeout(30)
    void aRankKilledBySignalReportsTheShellStyleStatus()
    {
        Result r = launch("-np", "1", "sh", "-c", "kill -9 $$");

        assertEquals(137, r.status(), r.err());
        assertEquals(List.of("hcclrun: rank 0 exited with status 137; stopping the other ranks"), r.errLines());
    }

    @Test
    @Timeout(30)
    void allRanksExitingZeroAfterOthersGivesZero()
    {
        Result r = launch("-np", "3", "sh", "-c", "sleep 0.$RANK; echo done $RANK");

        assertEquals(0, r.status(), r.err());
        assertEquals("", r.err());
        assertEquals(List.of("[0] done 0", "[1] done 1", "[2] done 2"), r.sortedOutLines());
    }

    @Test
    @Timeout(30)
    void aCommandThatCannotStartGives127()
    {
        Result r = launch("-np", "2", dir.resolve("no-such-program").toString());

        assertEquals(LocalJob.START_FAILED, r.status());
        assertTrue(r.err().startsWith("hcclrun: cannot start rank 0: "), r.err());
        assertEquals("", r.out());
    }
}
