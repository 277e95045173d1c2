package dev.hccl.core.bootstrap;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Rank 0's name is asked again until it resolves, as a Kubernetes headless Service's record appears only once rank
 * 0's pod has an address; a name that never resolves fails at the deadline, naming it.
 */
@Timeout(30)
class StoreAddressTest
{
    @Test
    void aNameThatResolvesLateIsWaitedFor()
    {
        final AtomicInteger asked = new AtomicInteger();
        final InetSocketAddress address = StoreAddress.resolve("train-0.train", 29500, 3,
            System.nanoTime() + TimeUnit.SECONDS.toNanos(10), (host, port) -> asked.incrementAndGet() < 4 ?
                InetSocketAddress.createUnresolved(host, port) :
                new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        assertEquals(4, asked.get());
        assertEquals(29500, address.getPort());
        assertTrue(address.getAddress().isLoopbackAddress());
    }

    @Test
    void aNameThatNeverResolvesFailsAtTheDeadlineNamingIt()
    {
        final long start = System.nanoTime();
        final HcclException ex = assertThrows(HcclException.class, () -> StoreAddress.resolve("nowhere.invalid",
            29500, 2, start + TimeUnit.MILLISECONDS.toNanos(300), InetSocketAddress::createUnresolved));
        assertEquals(ErrorCode.E_PARA, ex.errorCode());
        assertTrue(ex.getMessage().contains("cannot resolve the master address 'nowhere.invalid' within " +
            "HCCL_CONNECT_TIMEOUT"), ex.getMessage());
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(300), "it waited until the deadline");
    }
}
