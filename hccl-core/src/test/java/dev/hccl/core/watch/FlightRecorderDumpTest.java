package dev.hccl.core.watch;

import dev.hccl.api.CommConfig;
import dev.hccl.api.CommConfigBuilder;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.api.testing.Tee;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Where {@link Communicator#dumpTrace()} writes: without {@code HCCL_DUMP_DIR}, this user's private
 * {@code hccl-dumps-<user>} under the temporary directory, which someone else cannot redirect; the dump itself is
 * owner-only. The temporary directory is this test's own ({@code java.io.tmpdir} set for the call).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FlightRecorderDumpTest
{
    @TempDir
    Path tmp;

    private final List<Communicator> comms = new ArrayList<>();

    @AfterEach
    void close()
    {
        comms.forEach(Communicator::close);
    }

    private List<Communicator> communicators(final String dumpDir)
    {
        final CommConfigBuilder b = CommConfig.builder().environment(Map.of()).worldSize(2);
        if (dumpDir != null)
        {
            b.set(CommConfig.DUMP_DIR, dumpDir);
        }
        final List<Communicator> made = Hccl.initAll(2, b.conclude());
        comms.addAll(made);
        return made;
    }

    @Test
    void theDefaultDirectoryIsMadePrivateAndTheDumpOwnerOnly() throws Exception
    {
        final Path written = withTmpDir(() -> communicators(null).get(1).dumpTrace());
        final Path dir = PrivateDirectory.perUser(tmp, FlightRecorder.DEFAULT_DIR_PREFIX);
        assertEquals(dir, written.getParent());
        assertTrue(written.getFileName().toString().matches("hccl-trace-[0-9a-f]+-r1\\.json"), written.toString());
        assertEquals("rwx------", PrivateDirectoryTest.mode(dir));
        assertEquals("rw-------", PrivateDirectoryTest.mode(written));
        assertTrue(Files.readString(written).contains("\"rank\":1"));
    }

    /** A split communicator's dump says which job rank each of its ranks is, and its file names the rank. */
    @Test
    void aSplitCommunicatorsDumpNamesTheJobRanks() throws Exception
    {
        final List<Communicator> job = new ArrayList<>(Hccl.initAll(3, CommConfig.builder().environment(Map.of())
            .worldSize(3).set(CommConfig.DUMP_DIR, tmp.toString()).conclude()));
        comms.addAll(job);
        // ranks 1 and 2 of the job, as ranks 0 and 1 of the split
        final java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(3);
        final List<Communicator> split = new ArrayList<>();
        try
        {
            final List<java.util.concurrent.Future<Communicator>> made = new ArrayList<>();
            for (int r = 0; r < 3; r++)
            {
                final int rank = r;
                made.add(pool.submit(() -> job.get(rank).split(rank == 0 ? -1 : 1, rank)));
            }
            for (final java.util.concurrent.Future<Communicator> f : made)
            {
                final Communicator c = f.get(60, java.util.concurrent.TimeUnit.SECONDS);
                if (c != null)
                {
                    split.add(c);
                }
            }
        }
        finally
        {
            pool.shutdownNow();
        }
        comms.addAll(0, split);
        final Communicator second = split.stream().filter(c -> c.rank() == 1).findFirst().orElseThrow();
        final String dump = Files.readString(second.dumpTrace());
        assertTrue(dump.contains("\"rank\":1") && dump.contains("\"jobRanks\":[1,2]"), dump);
    }

    /**
     * Another user made the default name a link to a directory of theirs: nothing is written through it; the caller
     * learns why and what to set, and the log says so once however often it is asked.
     */
    @Test
    void aLinkPlantedAtTheDefaultDirectoryIsNotFollowedAndWarnsOnce() throws Exception
    {
        final Path theirs = Files.createDirectory(tmp.resolve("theirs"));
        final Path dir = Files.createSymbolicLink(PrivateDirectory.perUser(tmp, FlightRecorder.DEFAULT_DIR_PREFIX),
            theirs);
        final List<Communicator> c = communicators(null);
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        final PrintStream stderr = System.err;
        System.setErr(new PrintStream(new Tee(stderr, captured), true, StandardCharsets.UTF_8));
        final List<UncheckedIOException> failures = new ArrayList<>();
        try
        {
            withTmpDir(() ->
            {
                for (final Communicator comm : List.of(c.get(0), c.get(1), c.get(0)))
                {
                    failures.add(assertThrows(UncheckedIOException.class, comm::dumpTrace));
                }
                return null;
            });
        }
        finally
        {
            System.setErr(stderr);
        }
        try (Stream<Path> in = Files.list(theirs))
        {
            assertEquals(List.of(), in.toList(), "written through the link");
        }
        final String expected = dir + " is a symbolic link, owned by " + Files.getOwner(dir,
            LinkOption.NOFOLLOW_LINKS).getName();
        for (final UncheckedIOException ex : failures)
        {
            assertTrue(ex.getMessage().contains(expected) && ex.getMessage().contains("set HCCL_DUMP_DIR"),
                ex.getMessage());
        }
        final List<String> warnings =
            captured.toString(StandardCharsets.UTF_8).lines().filter(l -> l.contains("WARN")).toList();
        assertEquals(1, warnings.size(), "warnings: " + warnings);
        assertTrue(warnings.get(0).contains(expected) && warnings.get(0).contains("HCCL_DUMP_DIR"), warnings.get(0));
    }

    /** HCCL_DUMP_DIR is the user's choice and used as it is; a directory made for it and the dump are owner-only. */
    @Test
    void aConfiguredDirectoryIsMadeOwnerOnlyAndALinkAtTheDumpsNameIsReplacedNotFollowed() throws Exception
    {
        final Path dir = tmp.resolve("dumps");
        final Communicator comm = communicators(dir.toString()).get(0);
        final Path first = comm.dumpTrace();
        assertEquals("rwx------", PrivateDirectoryTest.mode(dir));
        assertEquals("rw-------", PrivateDirectoryTest.mode(first));

        Files.delete(first);
        final Path victim = Files.writeString(tmp.resolve("victim"), "untouched");
        Files.createSymbolicLink(first, victim);
        assertEquals(first, comm.dumpTrace());
        assertEquals("untouched", Files.readString(victim));
        assertTrue(Files.isRegularFile(first, LinkOption.NOFOLLOW_LINKS));
    }

    /**
     * HCCL_DUMP_DIR names a path in a directory every user writes (the shared {@code /shared/dumps}), where another
     * user got first with a link to a directory of theirs: nothing is written through it, and the caller learns why.
     * A link of the user's own is followed.
     */
    @Test
    void aConfiguredDirectoryThatIsAnotherUsersLinkIsNotFollowed() throws Exception
    {
        assumeTrue(PrivateDirectoryTest.isRoot(), "a link of another user's (uid 65534) needs root; CI runs as root");
        final Path theirs = Files.createDirectory(tmp.resolve("theirs"));
        final Path planted = Files.createSymbolicLink(tmp.resolve("dumps"), theirs);
        Files.setAttribute(planted, "unix:uid", 65534, LinkOption.NOFOLLOW_LINKS);
        final Communicator comm = communicators(planted.toString()).get(0);
        final UncheckedIOException ex = assertThrows(UncheckedIOException.class, comm::dumpTrace);
        assertTrue(ex.getMessage().contains(planted + " is a symbolic link of another user's (this process runs as ") &&
            ex.getMessage().contains("set HCCL_DUMP_DIR to a directory of your own"), ex.getMessage());
        try (Stream<Path> in = Files.list(theirs))
        {
            assertEquals(List.of(), in.toList(), "written through the link");
        }

        final Path mine = Files.createDirectory(tmp.resolve("mine"));
        final Path link = Files.createSymbolicLink(tmp.resolve("my-dumps"), mine);
        final Communicator ours = communicators(link.toString()).get(0);
        assertEquals(link, ours.dumpTrace().getParent());
        try (Stream<Path> in = Files.list(mine))
        {
            assertEquals(1, in.filter(f -> f.getFileName().toString().startsWith("hccl-trace-")).count());
        }
    }

    /** A configured directory that others may write is refused too: they could replace a rank's dump. */
    @Test
    void aConfiguredDirectoryThatOthersMayWriteIsRefused() throws Exception
    {
        final Path open = Files.createDirectory(tmp.resolve("open"));
        Files.setPosixFilePermissions(open, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        final Communicator comm = communicators(open.toString()).get(0);
        final UncheckedIOException ex = assertThrows(UncheckedIOException.class, comm::dumpTrace);
        assertTrue(ex.getMessage().contains(open + " is writable by others (rwxrwxrwx)"), ex.getMessage());
        // Made with its parents where missing, owner-only.
        final Path nested = tmp.resolve("a/b/dumps");
        communicators(nested.toString()).get(1).dumpTrace();
        assertEquals("rwx------", PrivateDirectoryTest.mode(nested));
        assertEquals("rwx------", PrivateDirectoryTest.mode(nested.getParent()));
    }

    private <T> T withTmpDir(final Callable<T> body) throws Exception
    {
        final String saved = System.getProperty("java.io.tmpdir");
        System.setProperty("java.io.tmpdir", tmp.toString());
        try
        {
            return body.call();
        }
        finally
        {
            System.setProperty("java.io.tmpdir", saved);
        }
    }
}
