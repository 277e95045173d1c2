package dev.hccl.core;

import dev.hccl.api.CommConfig;
import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The eager budget bounds what a rank that does not receive holds (issue 13: 100 sends of 20 MiB to a rank that never
 * received all completed, and the receiver held 2.3 GB). Ranks as threads, so the mailbox can be looked into.
 */
@Timeout(120)
class FlowControlTest
{
    private static final int BUDGET = 256 * 1024;
    private static final int MESSAGES = 20;
    private static final int FLOATS = 256 * 1024; // 1 MiB a message, 16 segments of 64 KiB

    @Test
    void aRankThatDoesNotReceiveHoldsAtMostItsBudgetAndTheSendsWaitForTheReceives() throws Exception
    {
        final List<Communicator> comms = Hccl.initAll(2, CommConfig.builder().environment(Map.of()).worldSize(2)
            .segmentBytes(64 * 1024).eagerBudget(BUDGET).execTimeout(Duration.ofSeconds(60)).conclude());
        try
        {
            final Communicator receiver = comms.get(0);
            final Communicator sender = comms.get(1);
            final List<ByteBuffer> payloads = new ArrayList<>();
            final List<CommFuture> sends = new ArrayList<>();
            for (int m = 0; m < MESSAGES; m++)
            {
                final ByteBuffer b = ByteBuffer.allocateDirect(FLOATS * 4).order(ByteOrder.nativeOrder());
                for (int i = 0; i < FLOATS; i++)
                {
                    b.putFloat(4 * i, m * 1_000_000f + i);
                }
                payloads.add(b);
                sends.add(sender.sendAsync(b, FLOATS, DataType.FP32, 0));
            }
            Thread.sleep(200);
            final long held = ((CommunicatorImpl)receiver).mailbox().bufferedBytes();
            assertTrue(held > 0 && held <= BUDGET, "the receiver holds " + held + " bytes, budget " + BUDGET);
            assertFalse(sends.get(0).isDone(), "a 1 MiB send completed though its receive was never posted");

            final ByteBuffer got = ByteBuffer.allocateDirect(FLOATS * 4).order(ByteOrder.nativeOrder());
            for (int m = 0; m < MESSAGES; m++)
            {
                receiver.recv(got, FLOATS, DataType.FP32, 1);
                for (int i = 0; i < FLOATS; i++)
                {
                    if (got.getFloat(4 * i) != m * 1_000_000f + i)
                    {
                        throw new AssertionError("message " + m + " element " + i + " = " + got.getFloat(4 * i));
                    }
                }
                assertTrue(((CommunicatorImpl)receiver).mailbox().bufferedBytes() <= BUDGET);
            }
            for (final CommFuture f : sends)
            {
                f.join();
            }
            assertEquals(0, ((CommunicatorImpl)receiver).mailbox().bufferedBytes());
            assertEquals(BUDGET, ((CommunicatorImpl)sender).fabricFlow().creditWith(0) +
                ((CommunicatorImpl)receiver).fabricFlow().owedTo(1),
                "every byte of credit is back with the sender, or owed to it in the next batch");
        }
        finally
        {
            comms.forEach(Communicator::close);
        }
    }
}
