package dev.hccl.core.transport;

import dev.hccl.api.spi.ProgressEngine;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CompositeProgressEngineTest
{
    @Test
    void noEngineIsNoneAndOneIsItself()
    {
        assertNull(CompositeProgressEngine.of(List.of()));
        final Recording one = new Recording("one", true);
        assertSame(one, CompositeProgressEngine.of(List.of(one)));
    }

    @Test
    void aThreadHoldsEveryEngineOrNoneAndEntersAgainWithoutEnteringThem() throws Exception
    {
        final Recording shm = new Recording("shm", false);
        final Recording tcp = new Recording("tcp", true);
        final ProgressEngine both = CompositeProgressEngine.of(List.of(shm, tcp));
        assertTrue(both.enter());
        assertTrue(both.enter(), "reentrant");
        assertEquals(1, shm.entered);
        assertEquals(1, tcp.entered);

        final AtomicBoolean other = new AtomicBoolean(true);
        final Thread t = new Thread(() -> other.set(both.enter()));
        t.start();
        t.join();
        assertFalse(other.get(), "another thread does not drive while one does");

        both.exit();
        assertEquals(1, shm.entered, "still held after the inner exit");
        both.exit();
        assertEquals(0, shm.entered);
        assertEquals(0, tcp.entered);

        // One engine driven elsewhere: the composite holds none rather than half.
        tcp.refuse = true;
        assertFalse(both.enter());
        assertEquals(0, shm.entered);
        tcp.refuse = false;
        assertTrue(both.enter());
        both.exit();
    }

    @Test
    void aWaitingPollSleepsInTheEngineThatWakesOnArrivalAndPollsTheOthersWithoutWaiting()
    {
        final Recording shm = new Recording("shm", false);
        final Recording tcp = new Recording("tcp", true);
        final ProgressEngine both = CompositeProgressEngine.of(List.of(shm, tcp));
        assertFalse(both.wakesOnArrival(), "a park in shared memory does not end when data comes");
        assertTrue(both.enter());
        assertEquals(0, both.poll(1_000));
        assertEquals(List.of("tcp:0", "shm:0", "tcp:1000", "shm:0"), Recording.calls(shm, tcp));

        shm.calls.clear();
        tcp.calls.clear();
        shm.work = 2;
        assertEquals(2, both.poll(1_000), "no wait when something was ready");
        assertEquals(List.of("tcp:0", "shm:0"), Recording.calls(shm, tcp));
        both.exit();
    }

    private static final class Recording implements ProgressEngine
    {
        private static final List<String> LOG = new ArrayList<>();
        final String name;
        final boolean wakes;
        final List<String> calls = new ArrayList<>();
        int entered;
        int work;
        volatile boolean refuse;

        Recording(final String name, final boolean wakes)
        {
            this.name = name;
            this.wakes = wakes;
        }

        static List<String> calls(final Recording a, final Recording b)
        {
            final List<String> all = new ArrayList<>(LOG);
            LOG.clear();
            a.calls.clear();
            b.calls.clear();
            return all;
        }

        @Override
        public boolean enter()
        {
            if (refuse)
            {
                return false;
            }
            entered++;
            return true;
        }

        @Override
        public void exit()
        {
            entered--;
        }

        @Override
        public int poll(final long waitNanos)
        {
            calls.add(name + ":" + waitNanos);
            LOG.add(name + ":" + waitNanos);
            final int w = work;
            work = 0;
            return w;
        }

        @Override
        public boolean wakesOnArrival()
        {
            return wakes;
        }
    }
}
