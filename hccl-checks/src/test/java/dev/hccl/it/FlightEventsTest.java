package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.CommConfig;
import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.core.events.CollectiveEvent;
import dev.hccl.core.events.ConnectionEvent;
import dev.hccl.core.events.FailureEvent;
import dev.hccl.core.events.PointToPointEvent;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The flight-recorder events (issue 30): a recording of two ranks that connect, all-reduce, broadcast, send and
 * receive, then fail on a count that differs between them, holds one event per operation and rank with what each
 * moved, its algorithm and transports, its sequence number (the same on both ranks for a collective), its time waiting
 * for the peer within its duration, the connections made at init, and each rank's failure with its code. The
 * warm-up's operations at init (on a twin communicator) are not recorded.
 */
@Timeout(180)
class FlightEventsTest
{
    private static final int COUNT = 1000;

    @TempDir
    Path tmp;

    @ParameterizedTest(name = "over {0}")
    @ValueSource(strings = {"shm", "tcp"})
    void aJobsOperationsConnectionsAndFailureAreRecordedWithTheirFields(final String transport) throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final List<RecordedEvent> events;
        final String[] allReduceAlgorithm = new String[2];
        final ErrorCode[] codes = new ErrorCode[2];
        try (Recording recording = new Recording())
        {
            for (final String name : List.of(CollectiveEvent.NAME, PointToPointEvent.NAME, ConnectionEvent.NAME,
                FailureEvent.NAME))
            {
                recording.enable(name).withThreshold(Duration.ZERO);
            }
            recording.start();
            Ranks.run(2, 120, rank ->
            {
                try (Communicator comm = Hccl.init(Ranks.onLoopback(rank, 2, port, "tcp".equals(transport))
                    .set(CommConfig.WARMUP_MS, 100).conclude()))
                {
                    allReduceAlgorithm[rank] = comm.algorithmFor(Operation.ALL_REDUCE, COUNT * 4L).algorithm();
                    final ByteBuffer data = ByteBuffer.allocateDirect(COUNT * 4).order(ByteOrder.nativeOrder());
                    comm.allReduce(data, data, COUNT, DataType.FP32, ReduceOp.SUM);
                    comm.broadcast(data, COUNT / 2, DataType.INT32, 1);
                    if (rank == 0)
                    {
                        comm.send(data, 100, DataType.INT32, 1);
                    }
                    else
                    {
                        comm.recv(data, 100, DataType.INT32, 0);
                    }
                    // A misuse: the counts differ. A rank that detects it fails with E_MISMATCH; one told first by
                    // the other, with E_REMOTE.
                    codes[rank] = assertThrows(HcclException.class,
                        () -> comm.allReduce(data, data, COUNT - 10 * rank, DataType.FP32, ReduceOp.SUM)).errorCode();
                }
                catch (final HcclException closing)
                {
                    // close() reports the failure again: it is the one asserted above
                }
                return null;
            });
            recording.stop();
            final Path file = tmp.resolve("hccl.jfr");
            recording.dump(file);
            events = RecordingFile.readAllEvents(file);
        }
        for (int rank = 0; rank < 2; rank++)
        {
            final int r = rank;
            final List<RecordedEvent> collectives = of(events, CollectiveEvent.NAME, r);
            assertEquals(3, collectives.size(), "rank " + r + ": " + collectives);
            final String id = collectives.get(0).getString("communicator");

            final RecordedEvent allReduce = collectives.get(0);
            assertEquals("allReduce", allReduce.getString("operation"));
            assertEquals("FP32", allReduce.getString("dataType"));
            assertEquals("SUM", allReduce.getString("reduction"));
            assertEquals(COUNT, allReduce.getLong("count"));
            assertEquals(COUNT * 4L, allReduce.getLong("bytes"));
            assertEquals(2, allReduce.getInt("worldSize"));
            assertEquals(allReduceAlgorithm[r], allReduce.getString("algorithm"), "rank " + r);
            assertFalse(allReduce.getBoolean("failed"));
            final long wait = allReduce.getLong("peerWait");
            assertTrue(wait >= 0 && wait <= allReduce.getDuration().toNanos(), "waited " + wait + " ns in " +
                allReduce.getDuration());

            final RecordedEvent broadcast = collectives.get(1);
            assertEquals("broadcast", broadcast.getString("operation"));
            assertEquals(1, broadcast.getInt("root"));
            assertEquals(COUNT / 2 * 4L, broadcast.getLong("bytes"));
            assertEquals(allReduce.getLong("sequence") + 1, broadcast.getLong("sequence"));

            final RecordedEvent mismatched = collectives.get(2);
            assertTrue(mismatched.getBoolean("failed"), mismatched.toString());
            assertEquals(COUNT - 10 * r, mismatched.getLong("count"));

            final List<RecordedEvent> p2p = of(events, PointToPointEvent.NAME, r);
            assertEquals(1, p2p.size(), p2p.toString());
            assertEquals(r == 0 ? "send" : "recv", p2p.get(0).getString("operation"));
            assertEquals(1 - r, p2p.get(0).getInt("peer"));
            assertEquals(400, p2p.get(0).getLong("bytes"));

            final List<RecordedEvent> connections = of(events, ConnectionEvent.NAME, r);
            assertEquals(1, connections.size(), connections.toString());
            assertEquals("[" + (1 - r) + "]", connections.get(0).getString("peers"));
            assertEquals(allReduce.getString("transport"), connections.get(0).getString("transport"));
            assertTrue(connections.get(0).getString("transport").startsWith(transport), connections.get(0).toString());

            final List<RecordedEvent> failures = of(events, FailureEvent.NAME, r);
            assertEquals(1, failures.size(), failures.toString());
            assertEquals(codes[r].name(), failures.get(0).getString("code"));
            assertEquals(codes[r] == ErrorCode.E_REMOTE, failures.get(0).getBoolean("relayed"));
            if (codes[r] == ErrorCode.E_REMOTE)
            {
                assertEquals(1 - r, failures.get(0).getInt("peer"), "names the rank it came from");
            }
            assertEquals("allReduce", failures.get(0).getString("operation"));
            assertEquals(mismatched.getLong("sequence"), failures.get(0).getLong("sequence"));
            assertEquals(id, failures.get(0).getString("communicator"));
        }
        assertTrue(codes[0] == ErrorCode.E_MISMATCH || codes[1] == ErrorCode.E_MISMATCH, List.of(codes).toString());
        // A collective's sequence number is the same on every rank.
        assertEquals(of(events, CollectiveEvent.NAME, 0).get(0).getLong("sequence"),
            of(events, CollectiveEvent.NAME, 1).get(0).getLong("sequence"));
    }

    private static List<RecordedEvent> of(final List<RecordedEvent> events, final String name, final int rank)
    {
        return events.stream().filter(e -> e.getEventType().getName().equals(name) && e.getInt("rank") == rank)
            .sorted((a, b) -> a.getStartTime().compareTo(b.getStartTime())).collect(Collectors.toList());
    }
}
