package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;
import dev.hccl.core.events.CollectiveEvent;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A job whose JVM runs no flight recording sets up none of the recorder's machinery (loading hccl-java's first event
 * class would: its metadata and a generated handler, some 0.1 s of init), and a recording started while the job runs
 * still gets its operations' events. In a JVM of its own, since a recording anywhere in the test JVM starts the
 * recorder for good.
 */
@Timeout(120)
class LateRecordingTest
{
    private static final String MARK = "LateRecordingTest: starting a recording";
    /** Loaded when the flight recorder sets up its metadata, as the first event class's loading does. */
    private static final String METADATA = "jdk.jfr.internal.MetadataRepository";

    @Test
    void noRecorderMachineryUntilARecordingStartsAndThenItsEvents() throws Exception
    {
        try (ProcessJob job = ProcessJob.onPort(TcpConformanceTest.freePort()))
        {
            job.startRank(0, 1, List.of(ProcessJob.JAVA, ProcessJob.QUICK_JIT, "-Xlog:class+load=info:stdout"),
                Rank.class, "256m", Map.of());
            assertEquals(0, job.awaitExit(0, 90), job::outputs);
            final String out = job.output(0);
            final int mark = out.indexOf(MARK);
            assertTrue(mark > 0, out);
            final String before = out.substring(0, mark);
            assertTrue(before.contains("dev.hccl.core.HcclProvider"), "init ran before the mark");
            assertFalse(before.contains(METADATA), "the recorder's metadata was set up before any recording");
            assertTrue(out.substring(mark).contains(METADATA), "a recording sets it up");
            assertTrue(out.contains("collective events: 2"), out.substring(mark));
        }
    }

    /** One rank: a communicator and an all-reduce, then a recording of two more all-reduces. */
    public static final class Rank
    {
        private Rank()
        {
        }

        /**
         * @param args none.
         * @throws Exception on failure.
         */
        public static void main(final String[] args) throws Exception
        {
            try (Communicator comm = Hccl.init())
            {
                final ByteBuffer data = ByteBuffer.allocateDirect(4096).order(ByteOrder.nativeOrder());
                comm.allReduce(data, data, 1024, DataType.FP32, ReduceOp.SUM);
                System.out.println(MARK);
                final Path file = Files.createTempFile("late-recording", ".jfr");
                try (Recording recording = new Recording())
                {
                    recording.enable(CollectiveEvent.NAME).withThreshold(Duration.ZERO);
                    recording.start();
                    comm.allReduce(data, data, 1024, DataType.FP32, ReduceOp.SUM);
                    comm.allReduce(data, data, 1024, DataType.FP32, ReduceOp.SUM);
                    recording.stop();
                    recording.dump(file);
                }
                final long events = RecordingFile.readAllEvents(file).stream()
                    .filter(e -> e.getEventType().getName().equals(CollectiveEvent.NAME)).count();
                Files.delete(file);
                System.out.println("collective events: " + events);
            }
        }
    }
}
