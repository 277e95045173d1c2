package dev.hccl.training;

import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

import static dev.hccl.training.GradientSyncTest.COUNTS;
import static dev.hccl.training.GradientSyncTest.assertReduced;
import static dev.hccl.training.GradientSyncTest.bytes;
import static dev.hccl.training.GradientSyncTest.gradients;
import static dev.hccl.training.GradientSyncTest.markAll;
import static dev.hccl.training.GradientSyncTest.smallBuckets;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * GradientSync refusing what it cannot do, over three ranks as threads: every misuse names the call, the rank and the
 * gradient and loses nothing of the step; ranks that disagree at build all fail, naming both values.
 */
@Timeout(120)
class GradientSyncMisuseTest extends ThreeRanks
{
    @Test
    void noSyncIsRefusedMidStepOrNestedAndItsCloseMidStep() throws Exception
    {
        RankThreads.values(comms, comm ->
        {
            try (GradientSync sync = GradientSync.builder(comm).buildViews(new long[]{8, 8}, DataType.FP32))
            {
                sync.markReady(0);
                final IllegalStateException midStep = assertThrows(IllegalStateException.class, sync::noSync);
                assertTrue(midStep.getMessage().startsWith("GradientSync.noSync() on rank " + comm.rank() +
                    ", step 0: in the middle of a step (1 gradients marked)"), midStep.getMessage());
                sync.markReady(1);
                sync.await();
                final NoSync scope = sync.noSync();
                assertTrue(assertThrows(IllegalStateException.class, sync::noSync).getMessage()
                    .contains("a noSync() scope is open already"));
                sync.markReady(1);
                assertTrue(assertThrows(IllegalStateException.class, scope::close).getMessage()
                    .contains("call await() to end it inside the scope"));
                sync.markReady(0);
                sync.await();
                scope.close();
                scope.close(); // idempotent
                assertEquals(1, sync.steps());
                assertEquals(1, sync.accumulatedSteps());
                sync.markReady(1);
                sync.markReady(0);
                sync.await(); // synchronises again: every rank issues it
                assertEquals(2, sync.steps());
            }
            return null;
        });
    }

    @Test
    void awaitWithUnmarkedGradientsNamesThemAndTheStepGoesOn() throws Exception
    {
        RankThreads.values(comms, comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, DataType.FP32);
            try (GradientSync sync = smallBuckets(GradientSync.builder(comm)).build(grads, DataType.FP32))
            {
                for (final int g : new int[] {0, 2, 4, 5, 6})
                {
                    sync.markReady(g);
                }
                final IllegalStateException ex = assertThrows(IllegalStateException.class, sync::await);
                assertTrue(ex.getMessage().contains("gradients [1, 3, 7] of 8 were not marked ready"),
                    ex.getMessage());
                assertTrue(ex.getMessage().contains("on rank " + comm.rank()), ex.getMessage());
                sync.markReady(1);
                sync.markReady(3);
                final IllegalStateException one = assertThrows(IllegalStateException.class, sync::await);
                assertTrue(one.getMessage().contains("gradient 7 of 8 was not marked ready"), one.getMessage());
                sync.markReady(7);
                sync.await();
                assertReduced(grads, 0, DataType.FP32, true, 1e-6);
            }
            return null;
        });
    }

    @Test
    void markingAGradientTwiceFailsAndLosesNothing() throws Exception
    {
        RankThreads.values(comms, comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, DataType.FP32);
            try (GradientSync sync = smallBuckets(GradientSync.builder(comm)).build(grads, DataType.FP32))
            {
                sync.markReady(3);
                final IllegalStateException ex = assertThrows(IllegalStateException.class, () -> sync.markReady(3));
                assertTrue(ex.getMessage().contains("gradient 3 was already marked ready in step 0"),
                    ex.getMessage());
                assertThrows(IllegalArgumentException.class, () -> sync.markReady(8));
                assertThrows(IllegalArgumentException.class, () -> sync.markReady(-1));
                for (int g = 0; g < COUNTS.length; g++)
                {
                    if (g != 3)
                    {
                        sync.markReady(g);
                    }
                }
                sync.await();
                assertReduced(grads, 0, DataType.FP32, true, 1e-6);
            }
            return null;
        });
    }

    @Test
    void aBufferWhosePositionOrLimitChangedIsRefused() throws Exception
    {
        RankThreads.values(comms, comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, DataType.FP32);
            try (GradientSync sync = GradientSync.builder(comm).build(grads, DataType.FP32))
            {
                grads.get(0).limit(100);
                final IllegalArgumentException ex =
                    assertThrows(IllegalArgumentException.class, () -> sync.markReady(0));
                assertTrue(ex.getMessage().contains("gradient 0's buffer now runs from 0 to 100, registered from 0 " +
                    "to 1200"), ex.getMessage());
                grads.get(0).limit(1200);
                markAll(sync, comm.rank());
                sync.await();
                assertReduced(grads, 0, DataType.FP32, true, 1e-6);
            }
            return null;
        });
    }

    @Test
    void aBufferShrunkAfterMarkingIsRefusedByAwaitWithTheStepKept() throws Exception
    {
        RankThreads.values(comms, comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, DataType.FP32);
            try (GradientSync sync = smallBuckets(GradientSync.builder(comm)).build(grads, DataType.FP32))
            {
                markAll(sync, comm.rank());
                grads.get(3).limit(40);
                final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, sync::await);
                assertTrue(ex.getMessage().contains("await() on rank " + comm.rank() + ", step 0: gradient 3's " +
                    "buffer now runs from 0 to 40, registered from 0 to 8000"), ex.getMessage());
                grads.get(3).limit(8000);
                sync.await();
                assertReduced(grads, 0, DataType.FP32, true, 1e-6);
            }
            return null;
        });
    }

    @Test
    void aBigEndianOrReadOnlyBufferIsRefused() throws Exception
    {
        final List<RankThreads.Outcome<Object>> bigEndian = RankThreads.each(comms, comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, DataType.FP32);
            grads.set(0, ByteBuffer.allocateDirect(COUNTS[0] * 4));
            return GradientSync.builder(comm).build(grads, DataType.FP32);
        });
        bigEndian.forEach(o -> assertTrue(o.failure().getMessage().contains("gradient 0 is in BIG_ENDIAN byte " +
            "order; elements are read in native order"), String.valueOf(o.failure())));
        final List<RankThreads.Outcome<Object>> readOnly = RankThreads.each(comms, comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, DataType.FP32);
            grads.set(2, grads.get(2).asReadOnlyBuffer().order(ByteOrder.nativeOrder()));
            return GradientSync.builder(comm).build(grads, DataType.FP32);
        });
        readOnly.forEach(o -> assertTrue(o.failure().getMessage().contains("gradient 2 is read-only"),
            String.valueOf(o.failure())));
        final List<RankThreads.Outcome<Object>> none = RankThreads.each(comms, comm ->
            GradientSync.builder(comm).build(comm.rank() == 1 ? List.of() : gradients(comm.rank(), 0,
                DataType.FP32), DataType.FP32));
        assertTrue(none.get(1).failure().getMessage().contains("no gradients"), String.valueOf(none.get(1).failure()));
        assertTrue(none.get(0).failure().getMessage().contains("rank 1 refused its gradients"),
            String.valueOf(none.get(0).failure()));
    }

    @Test
    void aClosedHelperRefusesCallsAndLeavesTheCommunicatorOpen() throws Exception
    {
        RankThreads.values(comms, comm ->
        {
            final GradientSync sync = GradientSync.builder(comm).build(gradients(comm.rank(), 0, DataType.FP32),
                DataType.FP32);
            sync.close();
            sync.close();
            assertThrows(IllegalStateException.class, () -> sync.markReady(0));
            assertThrows(IllegalStateException.class, sync::await);
            comm.barrier();
            return null;
        });
    }

    @Test
    void aHeapBufferOnOneRankFailsThatRankAndNamesItOnTheOthers() throws Exception
    {
        final List<RankThreads.Outcome<Object>> outcomes = RankThreads.each(comms, comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, DataType.FP32);
            if (comm.rank() == 1)
            {
                grads.set(5, ByteBuffer.allocate(COUNTS[5] * 4));
            }
            return GradientSync.builder(comm).build(grads, DataType.FP32);
        });
        final Throwable own = outcomes.get(1).failure();
        assertInstanceOf(IllegalArgumentException.class, own);
        assertTrue(own.getMessage().contains("gradient 5 is a heap buffer"), own.getMessage());
        for (final int r : new int[] {0, 2})
        {
            final HcclException ex = assertInstanceOf(HcclException.class, outcomes.get(r).failure());
            assertTrue(ex.getMessage().contains("rank 1 refused its gradients"), ex.getMessage());
        }
    }

    @Test
    void aPartialElementOrAnUnsupportedTypeIsRefused() throws Exception
    {
        final List<RankThreads.Outcome<Object>> partial = RankThreads.each(comms, comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, DataType.FP32);
            grads.get(2).limit(27);
            return GradientSync.builder(comm).build(grads, DataType.FP32);
        });
        for (final RankThreads.Outcome<Object> o : partial)
        {
            assertInstanceOf(IllegalArgumentException.class, o.failure());
            assertTrue(o.failure().getMessage().contains("gradient 2 holds 27 bytes, not a whole number of FP32"),
                o.failure().getMessage());
        }
        final List<RankThreads.Outcome<Object>> fp64 = RankThreads.each(comms, comm ->
            GradientSync.builder(comm).build(gradients(comm.rank(), 0, DataType.FP32), DataType.FP64));
        fp64.forEach(o -> assertTrue(o.failure().getMessage().contains("GradientSync takes FP32, FP16 or BF16"),
            String.valueOf(o.failure())));
        final List<RankThreads.Outcome<Object>> narrowHalf = RankThreads.each(comms, comm ->
            GradientSync.builder(comm).compression(Compression.fp16()).build(gradients(comm.rank(), 0,
                DataType.FP16), DataType.FP16));
        narrowHalf.forEach(o -> assertTrue(o.failure().getMessage().contains("compression fp16 applies to FP32 " +
            "gradients, these are FP16"), String.valueOf(o.failure())));
    }

    @Test
    void ranksWithDifferentCompressionFailNamingBoth() throws Exception
    {
        final List<RankThreads.Outcome<Object>> outcomes = RankThreads.each(comms, comm ->
            GradientSync.builder(comm).compression(comm.rank() == 0 ? Compression.fp16() : Compression.topK(0.01))
                .build(gradients(comm.rank(), 0, DataType.FP32), DataType.FP32));
        for (final RankThreads.Outcome<Object> o : outcomes)
        {
            final HcclException ex = assertInstanceOf(HcclException.class, o.failure());
            assertEquals(ErrorCode.E_MISMATCH, ex.errorCode());
            assertTrue(ex.getMessage().contains("compression: rank 0 has fp16, rank 1 has topK"), ex.getMessage());
        }
    }

    @Test
    void ranksWithDifferentSettingsOrSizesFailNamingBoth() throws Exception
    {
        assertEveryRankFails(comm -> GradientSync.builder(comm).average(comm.rank() != 2)
            .build(gradients(comm.rank(), 0, DataType.FP32), DataType.FP32),
            "average: rank 0 has true, rank 2 has false");
        assertEveryRankFails(comm -> GradientSync.builder(comm).bucketCapBytes(comm.rank() == 1 ? 1000 : 2000)
            .build(gradients(comm.rank(), 0, DataType.FP32), DataType.FP32),
            "bucketCapBytes: rank 0 has 2000, rank 1 has 1000");
        assertEveryRankFails(comm -> GradientSync.builder(comm).compression(Compression.topK(
            comm.rank() == 1 ? 0.1 : 0.01)).build(gradients(comm.rank(), 0, DataType.FP32), DataType.FP32),
            "topK fraction: rank 0 has 0.01, rank 1 has 0.1");
        assertEveryRankFails(comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, DataType.FP32);
            if (comm.rank() == 2)
            {
                grads.get(6).limit(0).position(0);
                grads.set(3, ByteBuffer.allocateDirect(1999 * 4).order(ByteOrder.nativeOrder()));
            }
            return GradientSync.builder(comm).build(grads, DataType.FP32);
        }, "gradient 3 has 2000 elements on rank 0 and 1999 on rank 2");
        assertEveryRankFails(comm -> GradientSync.builder(comm).build(
            gradients(comm.rank(), 0, DataType.FP32).subList(0, comm.rank() == 1 ? 7 : 8), DataType.FP32),
            "gradient count: rank 0 has 8, rank 1 has 7");
    }

    private void assertEveryRankFails(final RankThreads.RankTask<Object> task, final String message)
        throws Exception
    {
        for (final RankThreads.Outcome<Object> o : RankThreads.each(comms, task))
        {
            final HcclException ex = assertInstanceOf(HcclException.class, o.failure(), String.valueOf(o.value()));
            assertEquals(ErrorCode.E_MISMATCH, ex.errorCode());
            assertTrue(ex.getMessage().contains(message), ex.getMessage());
        }
    }
}
