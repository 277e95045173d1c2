package dev.hccl.core.bootstrap;

import dev.hccl.api.testing.FuzzCases;
import dev.hccl.api.testing.QuietLogs;
import dev.hccl.api.spi.JobKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UTFDataFormatException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A seeded fuzzer over the rendezvous store's protocol ({@link StoreServer}, {@link StoreProtocol}): 6,000 connections
 * by default over real loopback sockets, one after another, each with fuzzed bytes before the challenge (random,
 * a wrong magic or version, a hello cut short, a wrong proof: random, flipped, another token's, the server's role,
 * nonces swapped or replayed, or too short) or, in most cases, after passing it with the job key: requests that are
 * valid, mutated (flipped bytes, unknown codes, value lengths and key counts out of bounds, malformed keys, additions
 * to keys that hold no number or that would overfill the store) or cut short. The store listens before the job's
 * ranks have proved anything, so whatever a client sends it must not crash, stop serving, hang, hold more than its
 * limits, or leave threads behind.
 * <p>
 * What the store answers is checked byte for byte against a reference ({@code StoreModel}) written from the protocol:
 * the answer to each whole request, a partial CHECK answer flushed on a failure, and then the close: by the store
 * itself, at once, after garbage (the test sends nothing beyond the byte on which the store must give up, so the close
 * is the store's own), or after the test's end of stream. A GET that would wait for a missing key is cut short
 * instead, as the store honours the wait it is asked for. After every connection its thread in the store has ended
 * without an exception the store does not handle, and the bytes and keys held are the reference's and within
 * {@link StoreLimits}. Then a client of the job is still served, connections that go silent at any point are closed
 * by the store's own deadlines, and no thread of the store outlives it. {@value FuzzCases#SEED_PROPERTY},
 * {@value FuzzCases#ITERATIONS_PROPERTY} and {@value FuzzCases#CASES_PROPERTY} choose other cases
 * ({@link FuzzCases}); the store's contents are every earlier case's doing, so a failure names the cases to rerun
 * from the run's first.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class StoreFuzzTest
{
    /** Connections of a run. */
    static final long DEFAULT_ITERATIONS = 6_000;
    private static final long DEFAULT_SEED = 0x48435354_0002L;
    private static final JobKey KEY = JobKey.of("the job's secret");
    private static final JobKey STRANGER = JobKey.of("another job's secret");
    /** Small enough for the fuzz to fill; deadlines no case of the main fuzz comes near. */
    private static final StoreLimits LIMITS = new StoreLimits(64, 64, 64, 16 * 1024, 10_000, 10_000, 0);
    /** Short deadlines, for connections that go silent. */
    private static final StoreLimits SHORT_DEADLINES = new StoreLimits(64, 64, 64, 16 * 1024, 1_000, 1_000, 0);
    /** Far beyond any answer or close the store owes: a connection still silent then hangs. */
    private static final int HANG_MILLIS = 20_000;
    /** A GET of a missing key may wait this long; longer waits are cut short. */
    private static final long SHORT_WAIT_MILLIS = 5;
    /** Connections that go silent, at once. */
    private static final int SILENT_CONNECTIONS = 40;
    private static final String STORE_THREADS = "hccl-store-";
    private static final int KEY_POOL = 24;
    private static final long COVERAGE_MIN_CASES = 1_000;

    private final Map<String, Integer> outcomes = new TreeMap<>();
    /** What escaped the store's threads: none may die of an exception the store does not handle. */
    private final List<String> escaped = new CopyOnWriteArrayList<>();

    @Test
    void noClientBytesCrashHangOrOverfillTheStore() throws Exception
    {
        final FuzzCases cases = FuzzCases.fromProperties(DEFAULT_SEED, DEFAULT_ITERATIONS);
        final Set<Thread> before = storeThreads();
        final StoreModel model = new StoreModel(LIMITS.maxStoredBytes());
        final Thread.UncaughtExceptionHandler handler = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((t, ex) -> escaped.add(t.getName() + ": " + ex));
        try (QuietLogs quiet = QuietLogs.silence(StoreServer.class);
            StoreServer server = start(LIMITS))
        {
            for (long index = cases.first(); index < cases.end(); index++)
            {
                storeCase(server, model, cases, index);
            }
            System.out.println("StoreFuzzTest: " + cases.count() + " connections (" + cases.describeRun() + "): " +
                outcomes + "; " + server.keyCount() + " keys, " + server.storedBytes() + " bytes held");

            // Still serving a client of the job, with all it holds as the reference says; a full store takes a
            // smaller value for a key it holds.
            try (StoreClient client = StoreClient.connect(at(server), 0, inSeconds(10), KEY))
            {
                for (final Map.Entry<String, byte[]> e : model.values.entrySet())
                {
                    assertArrayEquals(e.getValue(), client.get(e.getKey(), inSeconds(10)), e.getKey());
                }
                final String held = new TreeMap<>(model.values).firstKey();
                client.set(held, new byte[0]);
                assertArrayEquals(new byte[0], client.get(held, inSeconds(10)));
                assertEquals(List.of(1), client.missing(List.of(held, "never set")));
            }
        }
        finally
        {
            Thread.setDefaultUncaughtExceptionHandler(handler);
        }
        assertNoStoreThreadOutlives(before);
        assertTrue(escaped.isEmpty(), () -> "exceptions killed store threads: " + escaped);
        if (cases.count() >= COVERAGE_MIN_CASES)
        {
            for (final String outcome : List.of("closed before the nonce", "closed after the nonce", "refused",
                "served to the end", "closed in a request", "closed on garbage", "GET cut short", "FULL answered"))
            {
                assertTrue(outcomes.containsKey(outcome), () -> "no connection ended '" + outcome + "': " + outcomes);
            }
        }
    }

    @Test
    void connectionsThatGoSilentAreClosedByTheStoresDeadlines() throws Exception
    {
        final FuzzCases cases = FuzzCases.fromProperties(DEFAULT_SEED, DEFAULT_ITERATIONS);
        final Set<Thread> before = storeThreads();
        try (QuietLogs quiet = QuietLogs.silence(StoreServer.class);
            StoreServer server = start(SHORT_DEADLINES))
        {
            final List<Socket> silent = new ArrayList<>();
            try
            {
                for (int i = 0; i < SILENT_CONNECTIONS; i++)
                {
                    final SplittableRandom r = cases.random(cases.first() + i);
                    final Socket socket = connect(server);
                    silent.add(socket);
                    goSilent(r, socket);
                }
                for (int i = 0; i < silent.size(); i++)
                {
                    // Whatever the store sent before, it closes the connection in the end.
                    final InputStream in = silent.get(i).getInputStream();
                    try
                    {
                        while (in.read() >= 0)
                        {
                            // what the store said before it gave up
                        }
                    }
                    catch (final SocketTimeoutException ex)
                    {
                        fail("silent connection " + i + " still open after " + HANG_MILLIS + " ms; " +
                            cases.describe(cases.first() + i), ex);
                    }
                    catch (final SocketException ex)
                    {
                        // reset by the store: closed as well
                    }
                }
            }
            finally
            {
                for (final Socket s : silent)
                {
                    s.close();
                }
            }
            try (StoreClient client = StoreClient.connect(at(server), 0, inSeconds(10), KEY))
            {
                client.set("k", "v");
                assertEquals("v", client.getString("k", inSeconds(10)));
            }
        }
        assertNoStoreThreadOutlives(before);
    }

    /**
     * Sends a prefix of a conversation, then nothing: a hello cut short, a proof cut short, nothing after the
     * challenge, a request cut short. A store that closes the connection early (its deadline passed on a slow
     * machine) ends the prefix: closing is what is checked.
     */
    private static void goSilent(final SplittableRandom r, final Socket socket)
    {
        try
        {
            final DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            final DataInputStream in = new DataInputStream(socket.getInputStream());
            final int pick = r.nextInt(4);
            final byte[] clientNonce = randomBytes(r, JobKey.NONCE_BYTES);
            if (0 == pick)
            {
                out.write(Arrays.copyOf(hello(clientNonce), r.nextInt(hello(clientNonce).length)));
            }
            else if (1 == pick)
            {
                out.write(hello(clientNonce));
                out.flush();
                final byte[] serverNonce = readNonce(in);
                out.write(Arrays.copyOf(KEY.prove(StoreProtocol.CLIENT_ROLE, serverNonce, clientNonce),
                    r.nextInt(JobKey.PROOF_BYTES)));
            }
            else if (null == authenticate(socket, in, out, clientNonce) && 3 == pick)
            {
                final byte[] request = requests(r, new StoreModel(LIMITS.maxStoredBytes()));
                out.write(Arrays.copyOf(request, r.nextInt(Math.max(1, request.length))));
            }
            out.flush();
        }
        catch (final IOException ex)
        {
            // closed by the store already
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // One connection.

    private void storeCase(final StoreServer server, final StoreModel model, final FuzzCases cases, final long index)
        throws InterruptedException
    {
        final SplittableRandom r = cases.random(index);
        // The store's contents are every earlier case's doing: a rerun starts from the run's first case.
        final String which = cases.describe(index, cases.first());
        final ByteArrayOutputStream sent = new ByteArrayOutputStream();
        String connection = "";
        try (Socket socket = connect(server))
        {
            connection = socket.getLocalSocketAddress().toString();
            final DataOutputStream out = new DataOutputStream(new TeeOutputStream(socket.getOutputStream(), sent));
            final DataInputStream in = new DataInputStream(socket.getInputStream());
            final String problem = r.nextInt(100) < 30 ? beforeTheChallenge(r, socket, in, out) :
                afterTheChallenge(r, model, socket, in, out);
            if (null != problem)
            {
                fail(problem + "; " + which + "; sent " + sent.size() + " bytes: " + hex(sent.toByteArray()));
            }
        }
        catch (final SocketTimeoutException ex)
        {
            fail("the store neither answered nor closed within " + HANG_MILLIS + " ms; " + which + "; sent " +
                sent.size() + " bytes: " + hex(sent.toByteArray()), ex);
        }
        catch (final IOException ex)
        {
            fail("the connection failed: " + ex + "; " + which + "; sent " + sent.size() + " bytes: " +
                hex(sent.toByteArray()), ex);
        }
        if (!connectionThreadEnds(connection))
        {
            fail("the store's thread for " + connection + " outlives the connection; " + which);
        }
        if (!escaped.isEmpty())
        {
            // The connection's thread has ended, for it closed the connection on its way out.
            fail("an exception killed a thread of the store: " + escaped + "; " + which + "; sent " +
                hex(sent.toByteArray()));
        }
        if (server.storedBytes() != model.storedBytes || server.keyCount() != model.values.size() ||
            server.storedBytes() > LIMITS.maxStoredBytes() || server.keyCount() > StoreProtocol.MAX_KEYS)
        {
            fail("the store holds " + server.keyCount() + " keys in " + server.storedBytes() + " bytes, the " +
                "reference " + model.values.size() + " in " + model.storedBytes + ", the limit " +
                LIMITS.maxStoredBytes() + "; " + which + "; sent " + hex(sent.toByteArray()));
        }
    }

    /** Fuzzed bytes before or in the challenge; returns what went wrong, or null. */
    private String beforeTheChallenge(
        final SplittableRandom r, final Socket socket, final DataInputStream in, final DataOutputStream out)
        throws IOException
    {
        final byte[] clientNonce = randomBytes(r, JobKey.NONCE_BYTES);
        final byte[] hello = hello(clientNonce);
        final int pick = r.nextInt(100);
        if (pick < 45)
        {
            // Random bytes, a wrong magic or version, or a hello cut short: the store gives up on the fifth byte
            // when the magic or version is wrong (nothing is sent beyond it), or reads to the end of the stream.
            final byte[] bytes = pick < 15 ? randomBytes(r, r.nextInt(24)) :
                pick < 30 ? mutatedHeader(r, hello) : Arrays.copyOf(hello, r.nextInt(hello.length));
            if (bytes.length > 0 && StoreProtocol.TLS_HANDSHAKE_RECORD == (bytes[0] & 0xFF))
            {
                return tlsRecord(bytes, socket, in, out);
            }
            final boolean wrong = bytes.length >= 5 && (StoreProtocol.MAGIC != getInt(bytes) ||
                StoreProtocol.VERSION != bytes[4]);
            out.write(wrong ? Arrays.copyOf(bytes, 5) : bytes);
            out.flush();
            if (!wrong)
            {
                socket.shutdownOutput();
            }
            tally("closed before the nonce");
            return expectClosed(in, "before the nonce");
        }
        out.write(hello);
        out.flush();
        final byte[] serverNonce = readNonce(in);
        final byte[] right = KEY.prove(StoreProtocol.CLIENT_ROLE, serverNonce, clientNonce);
        final byte[] proof = switch (r.nextInt(9))
        {
            case 0 -> randomBytes(r, JobKey.PROOF_BYTES);
            case 1 -> new byte[JobKey.PROOF_BYTES];
            case 2 -> STRANGER.prove(StoreProtocol.CLIENT_ROLE, serverNonce, clientNonce);
            case 3 -> flipped(r, right);
            case 4 -> KEY.prove(StoreProtocol.SERVER_ROLE, clientNonce, serverNonce);
            case 5 -> KEY.prove(StoreProtocol.CLIENT_ROLE, clientNonce, serverNonce);
            case 6 -> KEY.prove(StoreProtocol.CLIENT_ROLE, randomBytes(r, JobKey.NONCE_BYTES), clientNonce);
            default -> Arrays.copyOf(right, r.nextInt(JobKey.PROOF_BYTES));
        };
        out.write(proof);
        out.flush();
        if (proof.length < JobKey.PROOF_BYTES)
        {
            socket.shutdownOutput();
            tally("closed after the nonce");
            return expectClosed(in, "after the nonce");
        }
        final int verdict = in.read();
        if (StoreProtocol.REFUSED != verdict)
        {
            return "a wrong proof answered " + verdict + ", not REFUSED";
        }
        tally("refused");
        return expectClosed(in, "after REFUSED");
    }

    /** Passes the challenge, then fuzzed requests; returns what went wrong, or null. */
    private String afterTheChallenge(
        final SplittableRandom r, final StoreModel model, final Socket socket, final DataInputStream in,
        final DataOutputStream out) throws IOException
    {
        final String refused = authenticate(socket, in, out, randomBytes(r, JobKey.NONCE_BYTES));
        if (null != refused)
        {
            return refused;
        }
        byte[] requests = requests(r, model);
        final StoreModel.Outcome trial = model.copy().serve(requests);
        if (StoreModel.End.LONG_WAIT == trial.end())
        {
            // Cut inside the GET's timeout: the store would honour a long wait for a key nobody sets.
            requests = Arrays.copyOf(requests, trial.consumed() + r.nextInt(8));
            tally("GET cut short");
        }
        else if (StoreModel.End.CLOSED == trial.end())
        {
            // Nothing beyond the byte on which the store gives up: the close is then the store's own.
            requests = Arrays.copyOf(requests, trial.consumed());
        }
        final StoreModel.Outcome expected = model.serve(requests);
        out.write(requests);
        out.flush();
        if (StoreModel.End.CLOSED != expected.end())
        {
            socket.shutdownOutput();
        }
        final byte[] answers;
        try
        {
            answers = in.readAllBytes();
        }
        catch (final SocketException ex)
        {
            return "reset instead of closed (" + ex + ") with " + expected.end();
        }
        if (!Arrays.equals(expected.responses(), answers))
        {
            return "answered " + hex(answers) + ", expected " + hex(expected.responses()) + " then " +
                expected.end() + "; requests " + hex(requests);
        }
        tally(switch (expected.end())
        {
            case EOF_AT_BOUNDARY -> "served to the end";
            case EOF_IN_REQUEST -> "closed in a request";
            default -> "closed on garbage";
        });
        if (expected.full())
        {
            tally("FULL answered");
        }
        return null;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Requests.

    /** Up to ten requests, valid or not, on keys from a small pool so that they meet. */
    private static byte[] requests(final SplittableRandom r, final StoreModel model) throws IOException
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final DataOutputStream out = new DataOutputStream(bytes);
        final int count = 1 + r.nextInt(10);
        final boolean mutated = r.nextInt(100) < 35;
        final int mutatedAt = mutated ? r.nextInt(count) : -1;
        for (int i = 0; i < count; i++)
        {
            if (i == mutatedAt)
            {
                malformedRequest(r, out);
                continue;
            }
            final String key = key(r);
            switch (r.nextInt(20))
            {
                case 0, 1, 2, 3, 4, 5, 6 ->
                {
                    out.writeByte(StoreProtocol.SET);
                    out.writeUTF(key);
                    final byte[] value = value(r);
                    out.writeInt(value.length);
                    out.write(value);
                }
                case 7, 8, 9, 10, 11 ->
                {
                    out.writeByte(StoreProtocol.GET);
                    out.writeUTF(key);
                    // A missing key's GET waits: briefly, or (to be cut short) for long.
                    out.writeLong(model.values.containsKey(key) ? pick(r, Long.MAX_VALUE, r.nextLong(), 0, 1000) :
                        r.nextInt(20) == 0 ? pick(r, Long.MAX_VALUE, 60_000, r.nextLong()) :
                            pick(r, 0, -1, Long.MIN_VALUE, 1, 2));
                }
                case 12, 13, 14 ->
                {
                    out.writeByte(StoreProtocol.ADD);
                    out.writeUTF(r.nextBoolean() ? "n" + r.nextInt(4) : key);
                    out.writeLong(pick(r, 1, -1, 0, 7, r.nextLong(), Long.MAX_VALUE, Long.MIN_VALUE));
                }
                default ->
                {
                    out.writeByte(StoreProtocol.CHECK);
                    out.writeUTF("");
                    final int n = r.nextInt(6);
                    out.writeInt(n);
                    for (int k = 0; k < n; k++)
                    {
                        out.writeUTF(key(r));
                    }
                }
            }
        }
        final byte[] s = bytes.toByteArray();
        if (mutated && r.nextInt(3) == 0)
        {
            // And a few bytes flipped anywhere, or the stream cut anywhere.
            if (r.nextBoolean())
            {
                final int flips = 1 + r.nextInt(3);
                for (int f = 0; f < flips && s.length > 0; f++)
                {
                    s[r.nextInt(s.length)] ^= (byte)(1 + r.nextInt(255));
                }
                return s;
            }
            return Arrays.copyOf(s, r.nextInt(s.length + 1));
        }
        return s;
    }

    /** A request the store must refuse by closing, or one it must wait on the rest of. */
    private static void malformedRequest(final SplittableRandom r, final DataOutputStream out) throws IOException
    {
        switch (r.nextInt(8))
        {
            case 0 ->
            {
                out.writeByte(pick(r, 0, 5, 0x7F, -1, 1 + r.nextInt(255)));
                out.writeUTF(key(r));
            }
            case 1 ->
            {
                out.writeByte(StoreProtocol.SET);
                out.writeUTF(key(r));
                out.writeInt(pick(r, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, StoreProtocol.MAX_VALUE_BYTES + 1,
                    StoreProtocol.MAX_VALUE_BYTES + 1 + r.nextInt(Integer.MAX_VALUE - StoreProtocol.MAX_VALUE_BYTES)));
            }
            case 2 ->
            {
                out.writeByte(StoreProtocol.CHECK);
                out.writeUTF("");
                out.writeInt(pick(r, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, StoreProtocol.MAX_KEYS + 1));
            }
            case 3 ->
            {
                // Not modified UTF-8: a byte that starts no character, or a sequence cut by the next.
                out.writeByte(pick(r, StoreProtocol.SET, StoreProtocol.GET, StoreProtocol.ADD, StoreProtocol.CHECK));
                final byte[] bad = randomBytes(r, 1 + r.nextInt(8));
                bad[r.nextInt(bad.length)] = (byte)pick(r, 0xFF, 0xF0, 0x80, 0xC0, 0xE0);
                out.writeShort(bad.length);
                out.write(bad);
            }
            case 4 ->
            {
                // A key count the store accepts, with fewer keys behind it: it answers as it reads.
                out.writeByte(StoreProtocol.CHECK);
                out.writeUTF("");
                out.writeInt(StoreProtocol.MAX_KEYS);
                out.writeUTF(key(r));
            }
            case 5 ->
            {
                // An addition to a key that holds no number.
                out.writeByte(StoreProtocol.SET);
                out.writeUTF("text");
                out.writeInt(4);
                out.write("text".getBytes(StandardCharsets.US_ASCII));
                out.writeByte(StoreProtocol.ADD);
                out.writeUTF("text");
                out.writeLong(1);
            }
            case 6 ->
            {
                // A value as large as a request may carry: the store refuses it when full, and stays open.
                out.writeByte(StoreProtocol.SET);
                out.writeUTF(key(r));
                final int length = pick(r, LIMITS.maxStoredBytes() > Integer.MAX_VALUE ? 0 :
                    (int)LIMITS.maxStoredBytes() + 1, StoreProtocol.MAX_VALUE_BYTES);
                out.writeInt(length);
                out.write(new byte[length]);
            }
            default -> out.write(randomBytes(r, 1 + r.nextInt(16)));
        }
    }

    private static String key(final SplittableRandom r)
    {
        final int pick = r.nextInt(10);
        if (pick < 7)
        {
            return "k" + r.nextInt(KEY_POOL);
        }
        if (pick < 8)
        {
            return "";
        }
        // Any characters, NUL and lone surrogates too: modified UTF-8 carries them all.
        final char[] chars = new char[r.nextInt(8)];
        for (int i = 0; i < chars.length; i++)
        {
            chars[i] = (char)(r.nextBoolean() ? r.nextInt(0x80) : r.nextInt(0x10000));
        }
        return new String(chars);
    }

    private static byte[] value(final SplittableRandom r)
    {
        final int pick = r.nextInt(10);
        if (pick < 4)
        {
            return randomBytes(r, r.nextInt(512));
        }
        if (pick < 7)
        {
            return Long.toString(pick < 6 ? r.nextInt(1000) - 500 : r.nextLong()).getBytes(StandardCharsets.US_ASCII);
        }
        if (pick < 8)
        {
            return new byte[0];
        }
        return randomBytes(r, r.nextInt(4096));
    }

    // ---------------------------------------------------------------------------------------------------------------
    // The reference.

    /**
     * What the store holds and answers, from {@link StoreProtocol} and {@link StoreLimits}: each request is a code, a
     * key in modified UTF-8, and its arguments, read whole before it is answered (a CHECK answers each key as it
     * reads it); any failure closes the connection, what was answered up to it flushed first.
     */
    static final class StoreModel
    {
        enum End
        {
            /** The stream ended between requests: the store closes after the end of stream. */
            EOF_AT_BOUNDARY,
            /** The stream ended inside a request: the same. */
            EOF_IN_REQUEST,
            /** The store gives up on a request and closes, having read {@code consumed} bytes. */
            CLOSED,
            /** A GET of a missing key with a long timeout ends at {@code consumed}: the store would wait. */
            LONG_WAIT
        }

        /**
         * @param responses what the store sends.
         * @param end       how the connection ends.
         * @param consumed  the bytes the store reads before it closes or waits.
         * @param full      whether some SET was answered FULL.
         */
        record Outcome(byte[] responses, End end, int consumed, boolean full)
        {
        }

        final Map<String, byte[]> values = new HashMap<>();
        long storedBytes;
        /** The first ABORT's code, rank and reason, as a GET of a missing key answers them ever after; or null. */
        byte[] abortAnswer;
        private final long maxStoredBytes;

        StoreModel(final long maxStoredBytes)
        {
            this.maxStoredBytes = maxStoredBytes;
        }

        StoreModel copy()
        {
            final StoreModel copy = new StoreModel(maxStoredBytes);
            copy.values.putAll(values);
            copy.storedBytes = storedBytes;
            copy.abortAnswer = abortAnswer;
            return copy;
        }

        Outcome serve(final byte[] s)
        {
            final ByteArrayInputStream bytes = new ByteArrayInputStream(s);
            final DataInputStream in = new DataInputStream(bytes);
            final ByteArrayOutputStream responses = new ByteArrayOutputStream();
            final DataOutputStream out = new DataOutputStream(responses);
            boolean full = false;
            try
            {
                while (true)
                {
                    if (0 == bytes.available())
                    {
                        return new Outcome(responses.toByteArray(), End.EOF_AT_BOUNDARY, s.length, full);
                    }
                    final byte code = in.readByte();
                    final String key = in.readUTF();
                    switch (code)
                    {
                        case StoreProtocol.SET:
                        {
                            final int length = in.readInt();
                            if (length < 0 || length > StoreProtocol.MAX_VALUE_BYTES)
                            {
                                return closed(s, bytes, responses, full);
                            }
                            final byte[] value = new byte[Math.min(length, bytes.available())];
                            in.readFully(value);
                            if (value.length < length)
                            {
                                throw new EOFException();
                            }
                            final boolean stored = set(key, value);
                            full |= !stored;
                            out.writeByte(stored ? StoreProtocol.OK : StoreProtocol.FULL);
                            break;
                        }
                        case StoreProtocol.GET:
                        {
                            final int atTimeout = s.length - bytes.available();
                            final long timeoutMillis = in.readLong();
                            final byte[] value = values.get(key);
                            if (null == value && null != abortAnswer)
                            {
                                out.writeByte(StoreProtocol.ABORTED);
                                out.write(abortAnswer);
                                break;
                            }
                            if (null == value && timeoutMillis > SHORT_WAIT_MILLIS)
                            {
                                return new Outcome(responses.toByteArray(), End.LONG_WAIT, atTimeout, full);
                            }
                            if (null == value)
                            {
                                out.writeByte(StoreProtocol.TIMEOUT);
                            }
                            else
                            {
                                out.writeByte(StoreProtocol.OK);
                                out.writeInt(value.length);
                                out.write(value);
                            }
                            break;
                        }
                        case StoreProtocol.ADD:
                        {
                            final long delta = in.readLong();
                            final byte[] old = values.get(key);
                            final long sum;
                            try
                            {
                                sum = (null == old ? 0 : Long.parseLong(new String(old, StandardCharsets.US_ASCII))) +
                                    delta;
                            }
                            catch (final NumberFormatException ex)
                            {
                                return closed(s, bytes, responses, full);
                            }
                            if (!set(key, Long.toString(sum).getBytes(StandardCharsets.US_ASCII)))
                            {
                                return closed(s, bytes, responses, full);
                            }
                            out.writeLong(sum);
                            break;
                        }
                        case StoreProtocol.ABORT:
                        {
                            final int error = in.readInt();
                            final int rank = in.readInt();
                            final String reason = in.readUTF();
                            if (null == abortAnswer)
                            {
                                // The store answers a code it does not know as E_INTERNAL.
                                final ByteArrayOutputStream answer = new ByteArrayOutputStream();
                                final DataOutputStream a = new DataOutputStream(answer);
                                a.writeInt(Verdict.codeOf(error).code());
                                a.writeInt(rank);
                                a.writeUTF(reason);
                                abortAnswer = answer.toByteArray();
                            }
                            out.writeByte(StoreProtocol.OK);
                            break;
                        }
                        case StoreProtocol.CHECK:
                        {
                            final int n = in.readInt();
                            if (n < 0 || n > StoreProtocol.MAX_KEYS)
                            {
                                return closed(s, bytes, responses, full);
                            }
                            out.writeInt(n);
                            for (int i = 0; i < n; i++)
                            {
                                out.writeBoolean(values.containsKey(in.readUTF()));
                            }
                            break;
                        }
                        default:
                            return closed(s, bytes, responses, full);
                    }
                }
            }
            catch (final UTFDataFormatException ex)
            {
                return closed(s, bytes, responses, full);
            }
            catch (final EOFException ex)
            {
                return new Outcome(responses.toByteArray(), End.EOF_IN_REQUEST, s.length, full);
            }
            catch (final IOException ex)
            {
                throw new IllegalStateException("a byte array cannot fail", ex);
            }
        }

        private boolean set(final String key, final byte[] value)
        {
            final byte[] old = values.get(key);
            final long after = storedBytes + value.length + (null == old ? 2L * key.length() : -old.length);
            if (after > maxStoredBytes || (null == old && values.size() >= StoreProtocol.MAX_KEYS))
            {
                return false;
            }
            values.put(key, value);
            storedBytes = after;
            return true;
        }

        private static Outcome closed(
            final byte[] s, final ByteArrayInputStream bytes, final ByteArrayOutputStream responses,
            final boolean full)
        {
            return new Outcome(responses.toByteArray(), End.CLOSED, s.length - bytes.available(), full);
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Support.

    private static StoreServer start(final StoreLimits limits) throws IOException
    {
        return StoreServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), KEY, limits);
    }

    private static InetSocketAddress at(final StoreServer server)
    {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port());
    }

    private static Socket connect(final StoreServer server) throws IOException
    {
        final Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port());
        socket.setSoTimeout(HANG_MILLIS);
        socket.setTcpNoDelay(true);
        return socket;
    }

    private static long inSeconds(final int seconds)
    {
        return System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    }

    private static byte[] hello(final byte[] clientNonce)
    {
        final byte[] hello = new byte[5 + JobKey.NONCE_BYTES];
        hello[0] = (byte)(StoreProtocol.MAGIC >>> 24);
        hello[1] = (byte)(StoreProtocol.MAGIC >>> 16);
        hello[2] = (byte)(StoreProtocol.MAGIC >>> 8);
        hello[3] = (byte)StoreProtocol.MAGIC;
        hello[4] = StoreProtocol.VERSION;
        System.arraycopy(clientNonce, 0, hello, 5, clientNonce.length);
        return hello;
    }

    private static byte[] mutatedHeader(final SplittableRandom r, final byte[] hello)
    {
        final byte[] bytes = Arrays.copyOf(hello, 5 + r.nextInt(hello.length - 4));
        if (r.nextBoolean())
        {
            bytes[r.nextInt(4)] ^= (byte)(1 << r.nextInt(8));
        }
        else
        {
            bytes[4] = (byte)pick(r, 0, 1, StoreProtocol.VERSION + 1, 0x7F, -1); // any but VERSION
        }
        return bytes;
    }

    private static byte[] readNonce(final DataInputStream in) throws IOException
    {
        assertEquals(StoreProtocol.MODE_CLEAR, in.readByte());
        final byte[] nonce = new byte[JobKey.NONCE_BYTES];
        in.readFully(nonce);
        return nonce;
    }

    /** Passes the challenge as a client of the job; returns what went wrong, or null. */
    private static String authenticate(
        final Socket socket, final DataInputStream in, final DataOutputStream out, final byte[] clientNonce)
        throws IOException
    {
        out.write(hello(clientNonce));
        out.flush();
        final byte[] serverNonce = readNonce(in);
        out.write(KEY.prove(StoreProtocol.CLIENT_ROLE, serverNonce, clientNonce));
        out.flush();
        final int verdict = in.read();
        if (StoreProtocol.OK != verdict)
        {
            return "the right proof answered " + verdict;
        }
        final byte[] proof = new byte[JobKey.PROOF_BYTES];
        in.readFully(proof);
        if (!KEY.verify(proof, StoreProtocol.SERVER_ROLE, clientNonce, serverNonce))
        {
            return "the store's proof is not the job key's";
        }
        return null;
    }

    /**
     * Bytes that open a TLS record, at a store without TLS: it reads the whole record (nothing beyond it is sent, so
     * that the close is no reset), answers a fatal alert and closes; a record cut short, or longer than a TLS record
     * may be, is closed on without an answer.
     */
    private String tlsRecord(
        final byte[] bytes, final Socket socket, final DataInputStream in, final DataOutputStream out) throws IOException
    {
        final int length = bytes.length >= 5 ? ((bytes[3] & 0xFF) << 8) | (bytes[4] & 0xFF) : -1;
        final boolean whole = length >= 0 && length <= StoreProtocol.TLS_RECORD_MAX_BYTES && bytes.length >= 5 + length;
        out.write(whole ? Arrays.copyOf(bytes, 5 + length) : bytes);
        out.flush();
        socket.shutdownOutput();
        tally(whole ? "TLS record answered" : "TLS record cut short");
        final byte[] rest = in.readAllBytes();
        final byte[] due = whole ? StoreProtocol.TLS_PROTOCOL_VERSION_ALERT : new byte[0];
        return Arrays.equals(due, rest) ? null : "sent " + hex(rest) + " after a TLS record, expected " + hex(due);
    }

    /** The store closed the connection, having sent nothing more; returns what went wrong, or null. */
    private static String expectClosed(final InputStream in, final String when) throws IOException
    {
        try
        {
            final byte[] rest = in.readAllBytes();
            return 0 == rest.length ? null : "sent " + hex(rest) + " " + when + " and nothing was due";
        }
        catch (final SocketException ex)
        {
            return null; // reset by the store: closed as well
        }
    }

    private static byte[] flipped(final SplittableRandom r, final byte[] bytes)
    {
        final byte[] copy = bytes.clone();
        copy[r.nextInt(copy.length)] ^= (byte)(1 << r.nextInt(8));
        return copy;
    }

    private static byte[] randomBytes(final SplittableRandom r, final int length)
    {
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++)
        {
            bytes[i] = (byte)r.nextInt(256);
        }
        return bytes;
    }

    private static int getInt(final byte[] b)
    {
        return ((b[0] & 0xFF) << 24) | ((b[1] & 0xFF) << 16) | ((b[2] & 0xFF) << 8) | (b[3] & 0xFF);
    }

    private static int pick(final SplittableRandom r, final int... choices)
    {
        return choices[r.nextInt(choices.length)];
    }

    private static long pick(final SplittableRandom r, final long... choices)
    {
        return choices[r.nextInt(choices.length)];
    }

    private static String hex(final byte[] bytes)
    {
        final StringBuilder sb = new StringBuilder(Math.min(bytes.length, 512) * 2 + 16);
        for (int i = 0; i < Math.min(bytes.length, 512); i++)
        {
            sb.append(String.format("%02x", bytes[i]));
        }
        return bytes.length > 512 ? sb.append("...").toString() : sb.toString();
    }

    private void tally(final String outcome)
    {
        outcomes.merge(outcome, 1, Integer::sum);
    }

    /** The threads of every store in this JVM. */
    private static Set<Thread> storeThreads()
    {
        return Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().startsWith(STORE_THREADS))
            .collect(Collectors.toSet());
    }

    /**
     * Waits for the store's thread of a connection to end, as it must once the connection is closed; its name is the
     * store's and the connection's remote address.
     *
     * @return whether it ended (or had already).
     */
    private static boolean connectionThreadEnds(final String remoteAddress) throws InterruptedException
    {
        final String name = STORE_THREADS + remoteAddress;
        final Thread[] threads = new Thread[Thread.activeCount() + 16];
        final int n = Thread.currentThread().getThreadGroup().enumerate(threads);
        for (int i = 0; i < n; i++)
        {
            if (name.equals(threads[i].getName()))
            {
                threads[i].join(HANG_MILLIS);
                return !threads[i].isAlive();
            }
        }
        return true;
    }

    /** Every store thread started since {@code before} has ended, once the store is closed. */
    private static void assertNoStoreThreadOutlives(final Set<Thread> before)
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HANG_MILLIS);
        List<Thread> left;
        do
        {
            left = storeThreads().stream().filter(t -> !before.contains(t)).collect(Collectors.toList());
            if (left.isEmpty())
            {
                return;
            }
            sleep(10);
        }
        while (System.nanoTime() < deadline);
        fail("store threads outlive the store: " + left);
    }

    private static void sleep(final long millis)
    {
        try
        {
            Thread.sleep(millis);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    /** Writes to a socket and keeps a copy, for failure messages. */
    private static final class TeeOutputStream extends OutputStream
    {
        private final OutputStream out;
        private final ByteArrayOutputStream copy;

        TeeOutputStream(final OutputStream out, final ByteArrayOutputStream copy)
        {
            this.out = out;
            this.copy = copy;
        }

        @Override
        public void write(final int b) throws IOException
        {
            out.write(b);
            copy.write(b);
        }

        @Override
        public void write(final byte[] b, final int off, final int len) throws IOException
        {
            out.write(b, off, len);
            copy.write(b, off, len);
        }

        @Override
        public void flush() throws IOException
        {
            out.flush();
        }
    }
}
