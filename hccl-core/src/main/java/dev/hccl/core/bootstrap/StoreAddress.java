package dev.hccl.core.bootstrap;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.function.BiFunction;

/**
 * Rank 0's store address, resolved by waiting: under a scheduler rank 0's name may not resolve yet when the other
 * ranks start (a Kubernetes headless Service publishes a pod's DNS record once the pod has an address), so a name
 * that does not resolve is asked again, with backoff, until the connect deadline, as the store's port is. The JVM
 * remembers a failed lookup for 10 s ({@code networkaddress.cache.negative.ttl}), so a name is seen at most that late.
 */
final class StoreAddress
{
    private static final Logger LOG = LoggerFactory.getLogger(StoreAddress.class);
    private static final long FIRST_BACKOFF_MILLIS = 20;
    private static final long LONGEST_BACKOFF_MILLIS = 1000;

    private StoreAddress()
    {
    }

    /**
     * @param host          the name or address.
     * @param port          the port.
     * @param rank          this rank, for the messages.
     * @param deadlineNanos when to give up, as {@link System#nanoTime()}.
     * @param resolver      makes an address, unresolved when the name does not resolve: {@code InetSocketAddress::new}.
     * @return the resolved address.
     * @throws HcclException {@link ErrorCode#E_PARA} naming the host when it still does not resolve at the deadline.
     */
    static InetSocketAddress resolve(
        final String host, final int port, final int rank, final long deadlineNanos,
        final BiFunction<String, Integer, InetSocketAddress> resolver)
    {
        long backoffMillis = FIRST_BACKOFF_MILLIS;
        final WaitReport report = new WaitReport(deadlineNanos);
        while (true)
        {
            final InetSocketAddress address = resolver.apply(host, port);
            if (!address.isUnresolved())
            {
                return address;
            }
            final boolean interrupted = Thread.currentThread().isInterrupted();
            if (System.nanoTime() - deadlineNanos >= 0 || interrupted)
            {
                throw new HcclException(ErrorCode.E_PARA, rank, HcclException.UNKNOWN_RANK, Operation.INIT,
                    HcclException.NO_SEQUENCE, "cannot resolve the master address '" + host + "' " + (interrupted ?
                    "(interrupted while waiting for it)" : "within HCCL_CONNECT_TIMEOUT") + ": set MASTER_ADDR to " +
                    "rank 0's host name or address", null);
            }
            if (report.due())
            {
                LOG.info("rank {}: rank 0's address '{}' does not resolve yet; {}", rank, host, report.left());
            }
            try
            {
                Thread.sleep(Math.max(1, Math.min(backoffMillis, (deadlineNanos - System.nanoTime()) / 1_000_000L)));
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            backoffMillis = Math.min(LONGEST_BACKOFF_MILLIS, backoffMillis * 2);
        }
    }
}
