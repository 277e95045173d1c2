package dev.hccl.api.spi;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BackoffWaitTest
{
    @Test
    void spinsOnlyWhenEveryRankOfTheNodeHasACore()
    {
        assertEquals(BackoffWait.SPIN_NANOS, BackoffWait.forNode(2, 2).spinNanos());
        assertEquals(0, BackoffWait.forNode(4, 2).spinNanos(), "spinning would take the sender's core");
        assertEquals(BackoffWait.QUICK_LOOKS, BackoffWait.forNode(2, 2).quickLooks());
        assertEquals(0, BackoffWait.forNode(4, 2).quickLooks(), "nor may a look before the spin");
        assertSame(BackoffWait.forNode(1, 8), BackoffWait.forNode(2, 8));
    }

    @Test
    void spinsThenYieldsThenWaitsInTheEngineLongerAsIdlenessLasts()
    {
        final BackoffWait policy = BackoffWait.forNode(1, 2);
        final Engine selector = new Engine(true);
        final Engine memory = new Engine(false);
        policy.idle(selector, 0, 1_000_000_000L);
        policy.idle(selector, BackoffWait.SPIN_NANOS + 1, 1_000_000_000L);
        assertTrue(selector.waits.isEmpty(), "neither spinning nor yielding polls the engine");

        policy.idle(selector, BackoffWait.YIELD_NANOS, 1_000_000_000L);
        policy.idle(selector, BackoffWait.YIELD_NANOS, 3_000_000L);
        assertEquals(List.of(BackoffWait.SLEEP_MAX_NANOS, 3_000_000L), selector.waits,
            "a selector sleeps long, ended by arrivals, and never past the deadline");

        policy.idle(memory, BackoffWait.YIELD_NANOS, 1_000_000_000L);
        policy.idle(memory, BackoffWait.YIELD_NANOS + 1_600_000, 1_000_000_000L);
        policy.idle(memory, BackoffWait.YIELD_NANOS + 100_000_000, 1_000_000_000L);
        assertEquals(List.of(BackoffWait.PARK_MIN_NANOS, 200_000L, BackoffWait.PARK_MAX_NANOS), memory.waits,
            "a park grows with idleness up to its cap, since nothing ends it early");
    }

    @Test
    void withNoEngineItParksUntilTheCompletionWakesItOrTheDeadlinePasses() throws Exception
    {
        final BackoffWait policy = BackoffWait.forNode(4, 2);
        final Request completed = new Request(1, false, 0);
        final Thread completer = new Thread(() ->
        {
            LockSupport.parkNanos(300_000_000L); // long past the yielding: the waiter is parked by then
            completed.complete();
        });
        final long start = System.nanoTime();
        completer.start();
        assertTrue(completed.await(start + 60_000_000_000L, null, policy));
        final long waited = System.nanoTime() - start;
        assertTrue(waited < 10_000_000_000L, "the completion must wake the parked waiter, waited " + waited + " ns");
        completer.join();

        final Request never = new Request(1, false, 0);
        final long before = System.nanoTime();
        assertFalse(never.await(before + 50_000_000L, null, policy));
        assertTrue(System.nanoTime() - before >= 50_000_000L, "returned before its deadline");
    }

    @Test
    void refusesPhasesOutOfOrder()
    {
        assertThrows(IllegalArgumentException.class, () -> new BackoffWait(10, 5));
        assertThrows(IllegalArgumentException.class, () -> new BackoffWait(-1, 5));
    }

    private static final class Engine implements ProgressEngine
    {
        final boolean wakes;
        final List<Long> waits = new ArrayList<>();

        Engine(final boolean wakes)
        {
            this.wakes = wakes;
        }

        @Override
        public boolean enter()
        {
            return true;
        }

        @Override
        public void exit()
        {
        }

        @Override
        public int poll(final long waitNanos)
        {
            waits.add(waitNanos);
            return 0;
        }

        @Override
        public boolean wakesOnArrival()
        {
            return wakes;
        }
    }
}
